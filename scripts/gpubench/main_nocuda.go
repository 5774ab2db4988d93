//go:build !cuda

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "gpubench: built without the cuda tag: build with go run -tags cuda ./scripts/gpubench")
	os.Exit(2)
}
