import sys

from actors.launch import main

sys.exit(main())
