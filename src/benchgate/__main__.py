from benchgate.cli import main

raise SystemExit(main())
