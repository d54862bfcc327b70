import sys

from ai_eval_lsp.cli import main

sys.exit(main())
