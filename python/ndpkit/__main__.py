from ndpkit.cli import main

main()
