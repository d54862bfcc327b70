-- The project root of a file, found as the CLI finds it (SPEC section 5), so the editor and CI
-- see the same project: the nearest ancestor holding `ai-eval.toml`, a `pyproject.toml` with a
-- `[tool.ai-eval]` table, a `composer.json` (not a Drupal module's own) or `.git`, and no Drupal
-- module's `*.info.yml`; else the file's own folder. `/` and the home folder are never roots: the server walks its workspace
-- folders, and a dotfiles `.git` in the home folder must not make it walk the whole home.
local M = {}

-- The files that mark a root (see M.is_root for the rules on composer.json and pyproject.toml).
M.markers = { "ai-eval.toml", "pyproject.toml", "composer.json", ".git" }

local uv = vim.loop

local function read(path)
  local file = io.open(path, "r")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

-- Whether pyproject.toml has a `tool.ai-eval` table, as Python's tomllib would read it: a
-- `[tool.ai-eval]` header (or a sub-table, or the quoted `"ai-eval"`), an `ai-eval` key (dotted or
-- inline) in the `[tool]` table, or a top-level `tool.ai-eval...` dotted key. Comments and the
-- lines of multi-line strings are skipped.
-- The cases are tests/fixtures/roots.json, which the CLI is tested against too.
local AI_EVAL = '"?ai%-eval"?'

-- Where a string that starts at `i` ends (its last character) in `line`; nil when it does not
-- end on this line. `quote` is its delimiter; basic strings (`"`, `"""`) take `\` escapes.
local function string_end(line, i, quote)
  local j = i
  while j <= #line do
    if quote:sub(1, 1) == '"' and line:sub(j, j) == "\\" then
      j = j + 2
    elseif line:sub(j, j + #quote - 1) == quote then
      return j + #quote - 1
    else
      j = j + 1
    end
  end
  return nil
end

-- The delimiter of the multi-line string a line leaves open, if any: the line is read as TOML
-- from the state `open` (the delimiter of a multi-line string it starts inside), strings and
-- comments included.
local function open_string_after(line, open)
  local i = 1
  if open then
    local close = string_end(line, 1, open)
    if not close then
      return open
    end
    i = close + 1
  end
  while i <= #line do
    local c = line:sub(i, i)
    if c == "#" then
      return nil
    end
    local quote = (line:sub(i, i + 2) == '"""' or line:sub(i, i + 2) == "'''") and line:sub(i, i + 2)
      or ((c == '"' or c == "'") and c)
    if quote then
      local close = string_end(line, i + #quote, quote)
      if not close then
        return #quote == 3 and quote or nil
      end
      i = close + 1
    else
      i = i + 1
    end
  end
  return nil
end

local function has_ai_eval_table(path)
  local text = read(path)
  if not text then
    return false
  end
  local table_name = ""
  local in_string = nil
  for line in text:gmatch("[^\r\n]+") do
    local header = not in_string and line:match("^%s*%[%s*([^%]]-)%s*%]")
    if in_string then
      in_string = open_string_after(line, in_string)
    elseif header then
      table_name = header:gsub("%s", "")
      if table_name:match("^tool%." .. AI_EVAL .. "$") or table_name:match("^tool%." .. AI_EVAL .. "%.") then
        return true
      end
    elseif not line:match("^%s*#") then
      local key = line:match("^%s*([^=]-)%s*=")
      if key then
        key = key:gsub("%s", "")
        if table_name == "tool" and (key:match("^" .. AI_EVAL .. "$") or key:match("^" .. AI_EVAL .. "%.")) then
          return true
        end
        if table_name == "" and key:match("^tool%." .. AI_EVAL .. "[%.]?") then
          return true
        end
      end
      in_string = open_string_after(line, nil)
    end
  end
  return false
end

-- A Drupal module, theme or profile ships its own composer.json ("type": "drupal-module"); it
-- belongs to the site around it, so only other composer.json files mark a project (a
-- "drupal-project" is the site itself). One that cannot be read still marks a project.
local function composer_project(path)
  local text = read(path)
  if not text then
    return false
  end
  local ok, data = pcall(vim.json.decode, text)
  if not ok or type(data) ~= "table" then
    return true
  end
  local kind = data.type
  return not (type(kind) == "string" and kind:sub(1, 7) == "drupal-" and kind ~= "drupal-project")
end

-- Whether an `.info.yml` says `type: module` on a line of its own, as disk/roots.py reads it: in
-- its first 4096 bytes, quoted alike on both sides or not at all, a comment after it allowed, the
-- last line with or without its newline.
local function is_module_info(path)
  local file = io.open(path, "rb")
  if not file then
    return false
  end
  local head = file:read(4096) or ""
  file:close()
  for line in (head .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^type:%s*(['\"]?)module%1%s*$") or line:match("^type:%s*(['\"]?)module%1%s*#") then
      return true
    end
  end
  return false
end

-- Whether a folder holds a Drupal module's `<name>.info.yml`: such a folder is never a root,
-- whatever else it holds, so a module checked out with its own `.git` stays part of its site.
local function holds_module(dir)
  for _, info in ipairs(vim.fn.glob(dir .. "/*.info.yml", false, true)) do
    if is_module_info(info) then
      return true
    end
  end
  return false
end

--- Whether a folder holds one of the markers (and no Drupal module).
function M.is_root(dir)
  local marked = exists(dir .. "/ai-eval.toml")
    or exists(dir .. "/.git")
    or composer_project(dir .. "/composer.json")
    or has_ai_eval_table(dir .. "/pyproject.toml")
  return marked and not holds_module(dir)
end

local function strip(dir)
  if #dir > 1 then
    dir = dir:gsub("/+$", "")
  end
  return dir
end

-- `/` and the home folder: never a root, and never where the search looks.
local function forbidden(dir)
  local home = uv.os_homedir()
  return dir == "/" or (home ~= nil and dir == strip(home))
end

local function parent(dir)
  local up = vim.fn.fnamemodify(dir, ":h")
  if up == dir then
    return nil
  end
  return up
end

--- The root of a file path, or nil when there is none (a file right in `/` or the home folder:
--- the server then gets no workspace folder and walks nothing).
function M.find(path)
  if path == nil or path == "" then
    return nil
  end
  local start = strip(vim.fn.fnamemodify(path, ":p:h"))
  local dir = start
  while dir and not forbidden(dir) do
    if M.is_root(dir) then
      return dir
    end
    dir = parent(dir)
  end
  if forbidden(start) then
    return nil
  end
  return start
end

return M
