-- Two runs of the site's `support_bot` target, as the Drupal site's ai_eval module stores them in
-- its `ai_eval_result` table (created here as Drupal's SQLite driver creates it), over the
-- questions evals/refunds.cases.yaml asks. docs/runs.md makes the site's database from it:
--   sqlite3 site.sqlite < site-runs.sql
CREATE TABLE ai_eval_result (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  target_id VARCHAR(255) NOT NULL,
  run_id INTEGER NULL,
  timestamp INTEGER NOT NULL,
  avg_score FLOAT NOT NULL,
  pass_rate FLOAT NOT NULL,
  pass_rate_ci_low FLOAT NULL,
  pass_rate_ci_high FLOAT NULL,
  passed_gate INTEGER NOT NULL,
  question_count INTEGER NOT NULL,
  scores_json TEXT NOT NULL,
  source VARCHAR(255) NOT NULL,
  duration NUMERIC(10,2) NOT NULL,
  error_count INTEGER NOT NULL,
  config_json TEXT NULL
);
INSERT INTO ai_eval_result (target_id, run_id, timestamp, avg_score, pass_rate, pass_rate_ci_low,
  pass_rate_ci_high, passed_gate, question_count, scores_json, source, duration, error_count, config_json)
VALUES
  ('support_bot', 7, 1780000000, 3.2, 0.6, 0.2307, 0.8824, 0, 5,
   '{"refund_timeline": 4.5, "refund_timeline_card": 4.0, "refund_late": 1.0, "refund_when": 2.0, "refund_policy": 4.5}',
   'manual', 42, 0, '{"target": "support_bot", "model": "gpt-4o-mini"}'),
  ('support_bot', 8, 1780086400, 3.8, 0.8, 0.3755, 0.9638, 1, 5,
   '{"refund_timeline": 4.5, "refund_timeline_card": 4.0, "refund_late": 4.0, "refund_when": 2.0, "refund_policy": 4.5}',
   'manual', 40, 0, '{"target": "support_bot", "model": "gpt-4o-mini"}');
