from riskreport.run.cli import main

raise SystemExit(main())
