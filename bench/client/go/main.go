// Command benchget times GetSandbox through the Go package (bindings/go)
// against one server: the median per-call time of 9 rounds after a warm-up
// round, printed as "go_us <microseconds>", and the process's CPU time per
// call (all threads, user + system) as "go_cpu <microseconds>"
// (bench/client/run.sh).
//
//	go run . URL TOKEN SANDBOX_ID N
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"syscall"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: benchget URL TOKEN SANDBOX_ID N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[4])
	if err != nil || n < 10 {
		n = 10
	}
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(os.Args[1]), sandbox0.WithToken(os.Args[2]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchget:", err)
		os.Exit(1)
	}
	defer c.Close()
	ctx := context.Background()
	const rounds = 9
	per := n / rounds
	var us []float64
	var cpu float64
	for r := -1; r < rounds; r++ {
		t0 := time.Now()
		u0 := cpuUs()
		for i := 0; i < per; i++ {
			if _, err := c.GetSandbox(ctx, os.Args[3]); err != nil {
				fmt.Fprintln(os.Stderr, "benchget:", err)
				os.Exit(1)
			}
		}
		if r >= 0 {
			us = append(us, float64(time.Since(t0).Microseconds())/float64(per))
			cpu += cpuUs() - u0
		}
	}
	sort.Float64s(us)
	fmt.Printf("go_us %.1f\n", us[rounds/2])
	fmt.Printf("go_cpu %.1f\n", cpu/float64(per*rounds))
}

// cpuUs is this process's CPU time (user + system) in microseconds.
func cpuUs() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}
