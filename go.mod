module github.com/gocoll/gocoll

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
