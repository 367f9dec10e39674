"""The command the Claude Code registration runs: `python -S .../memstore/hookrun.py --root ROOT`.

The hook imports only the standard library, so it has no use for site-packages; `-S`
skips the site machinery (and an editable install's import finder), which is most of
a Python start-up. This file puts the folder that holds the memstore package on the
path itself and hands over to memstore.hook.handler, the same code as `memstore hook`.
"""

import os
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from memstore.hook.handler import main  # noqa: E402  (the path is set just above)

sys.exit(main())
