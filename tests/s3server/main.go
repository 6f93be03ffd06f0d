// Command weed is SeaweedFS's server program, built from its command package
// at the version go.mod pins, so the S3 test part (scripts/test.d/48-s3.sh)
// runs a real S3-compatible storage engine on loopback. It dispatches the
// first argument to that command like SeaweedFS's own main does, without the
// error reporting and web UI assets that main adds.
package main

import (
	"fmt"
	"os"
	"testing/fstest"

	"github.com/seaweedfs/seaweedfs/weed/command"
	weed_server "github.com/seaweedfs/seaweedfs/weed/server"
	util_http "github.com/seaweedfs/seaweedfs/weed/util/http"
)

func main() {
	weed_server.StaticFS = fstest.MapFS{}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: weed COMMAND [arguments]")
		os.Exit(2)
	}
	for _, cmd := range command.Commands {
		if cmd.Name() != os.Args[1] || cmd.Run == nil {
			continue
		}
		if cmd.Name() != command.GetFuseCommandName() {
			util_http.InitGlobalHttpClient()
		}
		cmd.Flag.Parse(os.Args[2:])
		if !cmd.Run(cmd, cmd.Flag.Args()) {
			os.Exit(1)
		}
		os.Exit(command.CommandExitStatus())
	}
	fmt.Fprintf(os.Stderr, "weed: unknown command %q\n", os.Args[1])
	os.Exit(2)
}
