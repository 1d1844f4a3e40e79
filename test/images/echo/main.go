// Command echo is the real-node test bed's server: on every port it is given it answers HTTP (TCP)
// and UDP datagrams with who answered, so that a traffic test can tell which pod of which cluster
// a request reached, and over which protocol and port.
//
//	echo [-ports 8080,9090] [-udp-ports 8080]
//	echo -probe URL [-interval 20ms]
//
// The answer is one line: "POD CLUSTER PROTO PORT", where POD and CLUSTER come from the POD_NAME
// and CLUSTER environment variables (the downward API and the Deployment).
//
// With -probe it is the client of the time-to-first-packet benchmark instead: it requests URL
// every interval, on a new connection each time (so kube-proxy chooses again), and prints one
// line per request, "UNIX-NANOSECONDS ANSWER" or "UNIX-NANOSECONDS -", for the bench to read from
// its log (pods share the host's clock).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	tcp := flag.String("ports", "8080", "comma-separated TCP ports answered over HTTP")
	udp := flag.String("udp-ports", "", "comma-separated UDP ports answered with one datagram per datagram")
	probeURL := flag.String("probe", "", "request this URL repeatedly and print the answers instead of serving")
	interval := flag.Duration("interval", 20*time.Millisecond, "time between -probe requests")
	flag.Parse()
	if *probeURL != "" {
		probe(*probeURL, *interval)
		return
	}
	pod, cluster := os.Getenv("POD_NAME"), os.Getenv("CLUSTER")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	who := func(proto string, port int) string { return fmt.Sprintf("%s %s %s %d\n", pod, cluster, proto, port) }
	for _, p := range ports(*tcp) {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			log.Fatal(err)
		}
		answer := who("tcp", p)
		go func() {
			log.Fatal(http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(answer))
			})))
		}()
	}
	for _, p := range ports(*udp) {
		c, err := net.ListenPacket("udp", ":"+strconv.Itoa(p))
		if err != nil {
			log.Fatal(err)
		}
		answer := []byte(who("udp", p))
		go func() {
			buf := make([]byte, 1500)
			for {
				_, from, err := c.ReadFrom(buf)
				if err != nil {
					log.Fatal(err)
				}
				_, _ = c.WriteTo(answer, from)
			}
		}()
	}
	log.Printf("echo: %s of %s answering tcp %s udp %s", pod, cluster, *tcp, *udp)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}

func probe(url string, every time.Duration) {
	c := &http.Client{Timeout: every * 10, Transport: &http.Transport{DisableKeepAlives: true}}
	for t := time.NewTicker(every); ; <-t.C {
		answer := "-"
		if resp, err := c.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				answer = strings.TrimSpace(string(b))
			}
		}
		fmt.Printf("%d %s\n", time.Now().UnixNano(), answer)
	}
}

func ports(list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			log.Fatalf("echo: bad port %q", s)
		}
		out = append(out, p)
	}
	return out
}
