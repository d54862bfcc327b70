-- What runs leave for the user: the failed cases of a run in the quickfix list and as diagnostics
-- on the cases file (namespace `ai_eval_runs`), and a target's history or a diff of two runs in
-- a scratch buffer.
local M = {}

M.namespace = vim.api.nvim_create_namespace("ai_eval_runs")

local request = require("ai_eval.client").request

local function given(value)
  return value ~= nil and value ~= vim.NIL
end

--- The target of a buffer: a rubric's `id`, or the rubric (without `@version`) a cases file runs.
function M.target_of(bufnr)
  local key = ({ rubric = "id", cases = "rubric" })[vim.b[bufnr].ai_eval_role or ""]
  if not key then
    return nil
  end
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local value = line:match("^" .. key .. ":%s*[\"']?([^\"'%s#@]+)")
    if value then
      return value
    end
  end
end

-- Why a case failed: its failed checks' reasons, else the verdict's own, else its error; and
-- what it expected, when `expect` is set and not met.
local function failure(case_id, verdict, answer)
  local expected = answer.expected and answer.expected[case_id]
  local passed = given(verdict) and verdict.passed
  local unmet = given(expected) and (not given(verdict) or (expected == "pass") ~= passed)
  if passed and not unmet then
    return nil
  end
  local text
  if not given(verdict) then
    text = "error: " .. ((answer.errors or {})[case_id] or "no verdict")
  else
    local reasons = {}
    for _, outcome in ipairs(verdict.outcomes or {}) do
      if not outcome.passed then
        table.insert(reasons, outcome.checkId .. ": " .. outcome.reason)
      end
    end
    local state = passed and "pass" or "fail"
    text = string.format("%s %.2f/5: %s", state, 5 * verdict.score,
      #reasons > 0 and table.concat(reasons, "; ") or verdict.reason)
  end
  if unmet then
    text = string.format("%s (expected %s)", text, expected)
  end
  return { text = text, severity = (unmet or not given(verdict)) and vim.diagnostic.severity.ERROR
    or vim.diagnostic.severity.WARN }
end

--- Show runs of cases files ({ uri, answer } each, answer being a runCases answer): the quickfix
--- list holds their failed cases, each cases file its diagnostics; cases are placed where the
--- server's workspace symbols say they are.
function M.show_runs(client, runs)
  request(client, "workspace/symbol", { query = "" }, function(_, symbols)
    local lines = {} -- uri -> case id -> 0-based line
    for _, symbol in ipairs(symbols or {}) do
      local uri = symbol.location.uri
      lines[uri] = lines[uri] or {}
      lines[uri][symbol.name] = symbol.location.range.start.line
    end
    local items, titles = {}, {}
    for _, run in ipairs(runs) do
      local bufnr = vim.fn.bufadd(vim.uri_to_fname(run.uri))
      local found = {}
      local ids = vim.tbl_keys(run.answer.verdicts or {})
      local places = lines[run.uri] or {}
      table.sort(ids, function(a, b) return (places[a] or -1) < (places[b] or -1) end)
      for _, case_id in ipairs(ids) do
        local failed = failure(case_id, run.answer.verdicts[case_id], run.answer)
        if failed then
          local lnum = places[case_id] or 0
          table.insert(found, { lnum = lnum, col = 0, severity = failed.severity, source = "ai-eval run",
            message = case_id .. ": " .. failed.text })
          table.insert(items, { bufnr = bufnr, lnum = lnum + 1, col = 1, text = case_id .. ": " .. failed.text,
            type = failed.severity == vim.diagnostic.severity.ERROR and "E" or "W" })
        end
      end
      vim.diagnostic.set(M.namespace, bufnr, found)
      local row = run.answer.row
      table.insert(titles, string.format("%s run %d", row.target_id, row.run_id))
    end
    vim.fn.setqflist({}, "r", { title = "ai-eval: " .. table.concat(titles, ", "), items = items })
  end)
end

-- --- history and diffs ---------------------------------------------------------------------------

local function when(row)
  return os.date("!%Y-%m-%d %H:%M", row.timestamp)
end

local function interval(row)
  if not given(row.pass_rate_ci_low) then
    return "[n/a]"
  end
  return string.format("[%.2f, %.2f]", row.pass_rate_ci_low, row.pass_rate_ci_high)
end

local function columns(table_rows)
  local widths = {}
  for _, row in ipairs(table_rows) do
    for index, cell in ipairs(row) do
      widths[index] = math.max(widths[index] or 0, vim.fn.strdisplaywidth(cell))
    end
  end
  local lines = {}
  for _, row in ipairs(table_rows) do
    local cells = {}
    for index, cell in ipairs(row) do
      table.insert(cells, cell .. string.rep(" ", widths[index] - vim.fn.strdisplaywidth(cell)))
    end
    table.insert(lines, (table.concat(cells, "  "):gsub("%s+$", "")))
  end
  return lines
end

function M.history_lines(target, rows)
  local table_rows = { { "run", "when (UTC)", "pass rate", "95% CI", "average", "gate", "cases", "errors", "source" } }
  for _, row in ipairs(rows) do
    table.insert(table_rows, {
      tostring(row.run_id), when(row), string.format("%.2f", row.pass_rate), interval(row),
      string.format("%.2f/5", row.avg_score), row.passed_gate == 1 and "passed" or "FAILED",
      tostring(row.question_count), tostring(row.error_count), row.source,
    })
  end
  local lines = { string.format("%s: %d runs, newest first", target, #rows) }
  vim.list_extend(lines, columns(table_rows))
  return lines
end

local function verdict(case)
  if not given(case) then
    return "-"
  elseif not given(case.score) then
    return "error"
  elseif not given(case.passed) then
    return string.format("%.2f", case.score)
  end
  return string.format("%s %.2f", case.passed and "pass" or "fail", case.score)
end

function M.diff_lines(diff)
  local base, head = diff.base, diff.head
  local flipped = {}
  for _, case_id in ipairs(diff.flipped) do
    flipped[case_id] = true
  end
  local lines = { string.format("%s: run %d (%s) -> run %d (%s) UTC", diff.target, base.run_id, when(base),
    head.run_id, when(head)) }
  if given(diff.notice) then
    table.insert(lines, diff.notice)
  end
  table.insert(lines, string.format("pass rate %.2f -> %.2f (%+.2f), average %.2f -> %.2f (%+.2f) of 5",
    base.pass_rate, head.pass_rate, diff.deltas.pass_rate, base.avg_score, head.avg_score, diff.deltas.avg_score))
  table.insert(lines, string.format("%d verdicts flipped; exact McNemar p = %.3g, sign test on scores p = %.3g",
    #diff.flipped, diff.mcnemar_p, diff.sign_test_p))
  table.insert(lines, "")
  local table_rows = { { "case", "base", "head", "change" } }
  for _, case in ipairs(diff.cases) do
    local change = ""
    if flipped[case.caseId] then
      change = (case.head.passed and "flipped to pass" or "flipped to fail")
    elseif not given(case.base) then
      change = "new"
    elseif not given(case.head) then
      change = "gone"
    elseif given(case.base.score) and given(case.head.score) and case.base.score ~= case.head.score then
      change = case.head.score > case.base.score and "up" or "down"
    end
    table.insert(table_rows, { case.caseId, verdict(case.base), verdict(case.head), change })
  end
  vim.list_extend(lines, columns(table_rows))
  return lines
end

--- A scratch buffer with a history (`aiEval.history`) or a diff (`aiEval.diff`), in a new window.
function M.open(command, argument, result)
  local lines, name
  if command == "aiEval.history" then
    lines, name = M.history_lines(argument.target, result.rows), "ai-eval://history/" .. argument.target
  else
    lines, name = M.diff_lines(result), string.format("ai-eval://diff/%s/%d-%d", result.target,
      result.base.run_id, result.head.run_id)
  end
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 then
    vim.api.nvim_buf_delete(existing, { force = true })
  end
  vim.cmd("new")
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].swapfile = false
  vim.api.nvim_buf_set_name(bufnr, name)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  return bufnr
end

return M
