// Command modelwire is a terminal workbench for seeing exactly what passes
// between an application and an LLM API. See README.md.
package main

import (
	"os"

	"github.com/modelwire/modelwire/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
