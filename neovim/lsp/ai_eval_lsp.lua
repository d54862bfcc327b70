-- Neovim 0.11+: vim.lsp.enable("ai_eval_lsp") uses this configuration.
local ai_eval = require("ai_eval")
ai_eval.prepare()
return {
  cmd = ai_eval.defaults.cmd,
  filetypes = ai_eval.defaults.filetypes,
  -- A function, not `root_markers`: a Drupal module's own composer.json must not make a root,
  -- and `/` or the home folder never is one (see lua/ai_eval/root.lua).
  root_dir = function(bufnr, on_dir)
    if ai_eval.is_file_buffer(bufnr) then
      on_dir(ai_eval.root_dir(vim.api.nvim_buf_get_name(bufnr)))
    end
  end,
  settings = ai_eval.defaults.settings,
  handlers = ai_eval.handlers,
  capabilities = ai_eval.capabilities, -- settings requests; diagnostic refresh where Neovim lacks it
  before_init = ai_eval.before_init, -- the settings in initializationOptions too
}
