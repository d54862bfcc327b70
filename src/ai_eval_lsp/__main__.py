import sys

from ai_eval_lsp.cli import console

sys.exit(console())
