from actors.launch import main
from rlar.process import exit_now

exit_now(main())
