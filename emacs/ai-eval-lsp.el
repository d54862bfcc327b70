;;; ai-eval-lsp.el --- ai_eval rubrics and cases files with eglot  -*- lexical-binding: t; -*-

;; Load it from your init file:  (load "/path/to/ai-eval-lsp/emacs/ai-eval-lsp.el")
;; YAML buffers then start `ai-eval-lsp serve' through eglot (Emacs 29's own, or Debian's
;; elpa-eglot on Emacs 28), in the buffer's project (project.el: its version-control root). The
;; server decides which YAML files are rubrics or cases files and reports problems in those only;
;; other YAML gets nothing. Its problems show through Flymake.

;;; Code:

(require 'eglot)
(require 'yaml-mode)

(defgroup ai-eval-lsp nil
  "ai_eval rubric and cases files, checked by ai-eval-lsp."
  :group 'tools)

(defcustom ai-eval-lsp-command '("ai-eval-lsp" "serve")
  "How to start the server: `ai-eval-lsp' on `exec-path', or a full path to it."
  :type '(repeat string))

(defcustom ai-eval-lsp-settings '(:aiEval (:runTimeoutSeconds 10))
  "The `aiEval' settings the server asks for (README, \"Settings\"), as a plist."
  :type 'sexp)

;; eglot runs one server per major mode: YAML buffers get ai-eval-lsp instead of
;; yaml-language-server.
(add-to-list 'eglot-server-programs `(yaml-mode . ,(lambda (&rest _) ai-eval-lsp-command)))
(setq-default eglot-workspace-configuration
              (append ai-eval-lsp-settings (default-value 'eglot-workspace-configuration)))
(add-hook 'yaml-mode-hook #'eglot-ensure)

(provide 'ai-eval-lsp)
;;; ai-eval-lsp.el ends here
