-- The project root of a file, found as the CLI finds it (SPEC section 5), so the editor and CI
-- see the same project: the nearest ancestor holding `ai-eval.toml`, a `pyproject.toml` with a
-- `[tool.ai-eval]` table, a `composer.json` (not a Drupal module's own) or `.git`; else the
-- file's own folder. `/` and the home folder are never roots: the server walks its workspace
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

-- A TOML key or table name as tomllib reads it for this purpose: its parts, unquoted, joined by dots.
local function dotted(name)
  return (name:gsub("[%s\"']", ""))
end

local function names_ai_eval(name)
  return name == "tool.ai-eval" or name:sub(1, 13) == "tool.ai-eval."
end

-- Whether the pyproject.toml has a `tool.ai-eval` table, as Python's tomllib would read it: a
-- table header (`[tool.ai-eval]`, a sub-table, `[tool."ai-eval"]`, an array of tables), or a key
-- that makes it (`ai-eval.x = 1` or `"ai-eval" = {}` under `[tool]`, `tool.ai-eval.x = 1` at the
-- top level). Comments and other tools' tables (`[tool.ai-evaluate]`) are not. tests/fixtures/roots.json
-- holds the cases the Python implementation answers too.
local function has_ai_eval_table(path)
  local text = read(path)
  if not text then
    return false
  end
  local table_name = nil -- the top level
  for line in text:gmatch("[^\r\n]+") do
    local header = line:match("^%s*%[%[?([^%]]*)%]")
    if header then
      table_name = dotted(header)
      if names_ai_eval(table_name) then
        return true
      end
    else
      local key = line:match("^%s*([%w_%-%.\"' ]-)%s*=")
      if key and key ~= "" then
        local name = dotted(key)
        if names_ai_eval(table_name and (table_name .. "." .. name) or name) then
          return true
        end
      end
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

--- Whether a folder holds one of the markers.
function M.is_root(dir)
  if exists(dir .. "/ai-eval.toml") or exists(dir .. "/.git") then
    return true
  end
  if composer_project(dir .. "/composer.json") then
    return true
  end
  return has_ai_eval_table(dir .. "/pyproject.toml")
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
