import sys

from sedcontract.cli import main

sys.exit(main())
