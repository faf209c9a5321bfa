// The command line names a file that does not exist.
