// Temporary: parsec serve with a CPU profile (deleted after profiling).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/parsecdb/parsec/internal/server"
)

func main() {
	var o server.Options
	flag.StringVar(&o.DataDir, "data", "./parsec-data", "")
	flag.BoolVar(&o.InMemory, "in-memory", false, "")
	flag.StringVar(&o.Listen, "listen", "127.0.0.1:8081", "")
	prof := flag.String("profile", "/tmp/server.prof", "")
	mutex := flag.String("mutexprofile", "", "")
	block := flag.String("blockprofile", "", "")
	delay := flag.Duration("delay", 5*time.Second, "")
	secs := flag.Duration("for", 10*time.Second, "")
	flag.Parse()
	s, err := server.Start(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("serving", s.URL())
	if *mutex != "" {
		runtime.SetMutexProfileFraction(5)
	}
	if *block != "" {
		runtime.SetBlockProfileRate(10000)
	}
	go func() {
		time.Sleep(*delay)
		f, _ := os.Create(*prof)
		pprof.StartCPUProfile(f)
		time.Sleep(*secs)
		pprof.StopCPUProfile()
		f.Close()
		if *mutex != "" {
			m, _ := os.Create(*mutex)
			pprof.Lookup("mutex").WriteTo(m, 0)
			m.Close()
		}
		if *block != "" {
			m, _ := os.Create(*block)
			pprof.Lookup("block").WriteTo(m, 0)
			m.Close()
		}
		fmt.Println("profile written")
	}()
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
	s.Shutdown(context.Background())
}
