-- Rubric and cases files get the compound filetype yaml.aieval: YAML highlighting and
-- ftplugins still apply, and only these buffers get the ai_eval_lsp server.
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  pattern = { "*.yaml", "*.yml" },
  callback = function(args)
    require("ai_eval").detect(args.buf)
  end,
})
