from gpulint.entry import main

main()
