package lab

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
)

// serveSocket serves the observer's in-memory LocalAPI on a Unix socket in
// the lab directory by copying bytes both ways, so tools that take a
// --socket flag can talk to the lab's observer.
func (l *Lab) serveSocket(ctx context.Context) error {
	path := filepath.Join(l.dir, "observer.sock")
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("lab: observer LocalAPI socket: %w", err)
	}
	l.sockLn, l.sockPath = ln, path
	var conns sync.WaitGroup
	l.loops.Add(1)
	go func() {
		defer l.loops.Done()
		defer conns.Wait()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				l.proxyLocalAPI(ctx, c)
			}()
		}
	}()
	return nil
}

// proxyLocalAPI connects c to the observer's LocalAPI until either side
// closes or ctx ends.
func (l *Lab) proxyLocalAPI(ctx context.Context, c net.Conn) {
	defer c.Close()
	up, err := l.observerDial(ctx, "tcp", "local-tailscaled.sock:80")
	if err != nil {
		l.logf("lab: observer LocalAPI dial: %v", err)
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	finished := 0
	select {
	case <-done:
		finished++
	case <-ctx.Done():
	}
	// Closing both ends stops whichever copier is still running.
	c.Close()
	up.Close()
	for ; finished < 2; finished++ {
		<-done
	}
}
