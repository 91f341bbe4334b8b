package lib

// EnvFile is the name of the file the loader reads: .env in the working directory.
const EnvFile = ".env"
