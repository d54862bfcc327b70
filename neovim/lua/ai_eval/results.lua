-- What runs leave for the user: the failed cases of a run (or, after a save, the cases that now
-- fail) in the quickfix list and as diagnostics on the cases file (namespace `ai_eval_runs`), and
-- what the server renders of a target's history or a diff of two runs in a scratch buffer.
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

--- Show runs of cases files ({ uri, answer, only? } each, answer being a runCases answer; `only`,
--- a set of case ids, limits what is shown): the quickfix list (titled `title`, else by the runs)
--- holds their failed cases, each cases file its diagnostics; cases are placed where the server's
--- workspace symbols say they are.
function M.show_runs(client, runs, title)
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
        if failed and (not run.only or run.only[case_id]) then
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
    vim.fn.setqflist({}, "r", { title = title or ("ai-eval: " .. table.concat(titles, ", ")), items = items })
  end)
end

--- A run on save that flipped a case (`aiEval/runComplete` with `change`): the quickfix list
--- holds the cases that now fail, titled with the server's summary.
function M.show_flips(client, params)
  local now_failing = {}
  for _, case in ipairs(params.change.cases) do
    if given(case.base) and case.base.passed == true and given(case.head) and case.head.passed == false then
      now_failing[case.caseId] = true
    end
  end
  local answer = { row = params, verdicts = params.verdicts or {}, errors = params.errors, expected = params.expected }
  M.show_runs(client, { { uri = params.casesUri, answer = answer, only = now_failing } }, "ai-eval: " .. params.summary)
end

--- A scratch buffer with what the server rendered (`aiEval.render`: a history or a diff, the
--- words the CLI prints), in a new window.
function M.open(argument, text)
  local name = "ai-eval://" .. argument.what .. "/" .. (argument.target or "latest")
  if argument.base then
    name = string.format("%s/%d-%s", name, argument.base, argument.head or "latest")
  end
  local lines = vim.split(text, "\n", { plain = true })
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
