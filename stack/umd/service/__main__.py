"""``python -m stack.umd.service``: serve the UMD until SIGTERM."""

from stack.umd.service.serve import main

main()
