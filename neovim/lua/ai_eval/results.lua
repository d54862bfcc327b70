-- What runs leave for the user, in the server's words: what a run's cases got (or, after a save,
-- the cases that now fail) in the quickfix list and as diagnostics on the cases file (namespace
-- `ai_eval_runs`), and a target's history, a diff of two runs or the site's runs in a scratch
-- buffer.
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

local severity = vim.diagnostic.severity

--- Show runs of cases files ({ uri, answer, only? } each, answer being a runCases answer; `only`,
--- a set of case ids, limits what is shown): the quickfix list (titled `title`, else by the runs)
--- holds the lines the server gives each case (the answer's `cases`, `ai-eval-lsp run`'s words):
--- errors for a case that failed or errored, warnings for one that passed with something to say
--- (it failed as its `expect: fail` says); each cases file gets them as diagnostics. Cases are
--- placed where the server's workspace symbols say they are.
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
      local cases = run.answer.cases
      if not given(cases) then
        vim.notify("ai-eval: the run's answer has no `cases`: is the server older than this plugin?", vim.log.levels.WARN)
        cases = {}
      end
      local ids = vim.tbl_keys(cases)
      local places = lines[run.uri] or {}
      table.sort(ids, function(a, b) return (places[a] or -1) < (places[b] or -1) end)
      for _, case_id in ipairs(ids) do
        local case = cases[case_id]
        if not run.only or run.only[case_id] then
          local lnum = places[case_id] or 0
          local level = case.state == "passed" and severity.WARN or severity.ERROR
          for _, message in ipairs(case.messages) do
            local text = case_id .. ": " .. message.text
            table.insert(found, { lnum = lnum, col = 0, severity = level, source = "ai-eval run", message = text })
            table.insert(items, { bufnr = bufnr, lnum = lnum + 1, col = 1, text = text,
              type = level == severity.ERROR and "E" or "W" })
          end
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
  for _, case_id in ipairs(params.nowFailing or {}) do
    now_failing[case_id] = true
  end
  local answer = { row = params, cases = params.cases }
  M.show_runs(client, { { uri = params.casesUri, answer = answer, only = now_failing } }, "ai-eval: " .. params.summary)
end

-- How many of the site's runs `:AiEvalSiteRuns` lists, newest first.
M.site_runs_listed = 100

-- A fact of a run as the server words it (its `facts`: date, pass rate, ...), or "".
local function fact(row, name)
  for _, pair in ipairs(given(row.facts) and row.facts or {}) do
    if pair[1] == name then
      return pair[2]
    end
  end
  return ""
end

--- The site's runs (`aiEval.siteRuns`'s rows, asked for one more than are listed) as lines: a
--- title, then each run's date and the server's line for it (which says `regressed` where it did).
function M.site_runs_lines(rows)
  local shown = math.min(#rows, M.site_runs_listed)
  local lines = {
    #rows > shown and string.format("The site's runs: the newest %d, newest first", shown)
      or string.format("The site's runs: %d, newest first", shown),
  }
  for index = 1, shown do
    local row = rows[index]
    table.insert(lines, string.format("%s  %s", fact(row, "date"), given(row.summary) and row.summary or ""))
  end
  return lines
end

--- A scratch buffer with what the server rendered (`aiEval.render`: a history or a diff, the
--- words the CLI prints), in a new window.
function M.open(argument, text)
  local name = "ai-eval://" .. argument.what .. "/" .. (argument.target or "latest")
  if argument.base then
    name = string.format("%s/%s-%s", name, argument.base, argument.head or "latest")
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
