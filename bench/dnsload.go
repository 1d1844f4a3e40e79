package main

// The load of make bench-dns: closed-loop workers asking one server over UDP for a fixed time,
// the two servers taken in turn, so that both see the same machine.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// dnsCase is one configuration: the name of a query to each server (n picks among many).
type dnsCase struct {
	label       string
	ours, floor func(n int) string
}

func dnsCases(dc dnsConfig) []dnsCase {
	const set, local = ".svc.clusterset.local.", ".svc.cluster.local."
	return []dnsCase{
		{fmt.Sprintf("%d imports: A of a ClusterSetIP service", dc.imports),
			func(n int) string { return dnsName(n%dc.imports) + "." + dnsNS + set },
			func(n int) string { return "derived-" + dnsName(n%dc.imports) + "." + dnsNS + local }},
		{fmt.Sprintf("Headless, %d endpoints: A of the service", dc.endpoints),
			func(int) string { return headless + "." + dnsNS + set },
			func(int) string { return "derived-" + headless + "." + dnsNS + local }},
		{fmt.Sprintf("Headless, %d endpoints: A of one endpoint", dc.endpoints),
			func(n int) string {
				return fmt.Sprintf("%s-%d.%s.%s.%s%s", headless, n%dc.endpoints, dnsSource, headless, dnsNS, set)
			},
			func(n int) string {
				return fmt.Sprintf("%s-%d.derived-%s.%s%s", headless, n%dc.endpoints, headless, dnsNS, local)
			}},
	}
}

// dnsLoad is what one server did under one configuration, over every round.
type dnsLoad struct {
	Queries   int       `json:"queries"`
	Failed    int       `json:"failed"` // timeouts, errors, and answers without records
	Seconds   float64   `json:"seconds"`
	QPS       float64   `json:"qps"`
	P50       float64   `json:"p50_ms"`
	P99       float64   `json:"p99_ms"`
	Answer    string    `json:"answer"` // the shape of one answer: records, bytes, TC
	latencies []float64 // ms
}

type dnsRow struct {
	Case    string  `json:"case"`
	Ours    dnsLoad `json:"dns_server"`
	CoreDNS dnsLoad `json:"coredns"`
}

// runDNSLoad loads each configuration's two servers in turn, dc.rounds times (who goes first
// alternates), dc.duration each.
func runDNSLoad(ctx context.Context, dc dnsConfig, cases []dnsCase, ours, floor string) []dnsRow {
	rows := make([]dnsRow, len(cases))
	for r := range dc.rounds {
		for i, k := range cases {
			rows[i].Case = k.label
			runs := []func(){
				func() { loadOne(ctx, dc, ours, k.ours, &rows[i].Ours) },
				func() { loadOne(ctx, dc, floor, k.floor, &rows[i].CoreDNS) },
			}
			if r%2 == 1 {
				runs[0], runs[1] = runs[1], runs[0]
			}
			for _, run := range runs {
				run()
			}
		}
		logf("round %d of %d done (load %s)", r+1, dc.rounds, loadAvg())
	}
	for i := range rows {
		for _, l := range []*dnsLoad{&rows[i].Ours, &rows[i].CoreDNS} {
			l.QPS = float64(l.Queries) / l.Seconds
			l.P50, l.P99 = percentile(l.latencies, 50), percentile(l.latencies, 99)
		}
		rows[i].Ours.Answer, rows[i].CoreDNS.Answer = shape(ours, cases[i].ours(0)), shape(floor, cases[i].floor(0))
	}
	return rows
}

// loadOne asks addr for dc.duration from dc.workers workers, each waiting for its answer before
// the next question (a fresh socket after a failure, so a late answer is never taken for the next).
func loadOne(ctx context.Context, dc dnsConfig, addr string, name func(int) string, into *dnsLoad) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(dc.duration)
	for w := range dc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			c := &dns.Client{Net: "udp", Timeout: time.Second}
			var co *dns.Conn
			var lat []float64
			failed := 0
			for time.Now().Before(end) && ctx.Err() == nil {
				if co == nil {
					var err error
					if co, err = c.Dial(addr); err != nil {
						failed++
						time.Sleep(10 * time.Millisecond)
						continue
					}
				}
				q := new(dns.Msg).SetQuestion(name(rng.IntN(1<<30)), dns.TypeA)
				t := time.Now()
				r, _, err := c.ExchangeWithConn(q, co)
				if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
					failed++
					co.Close()
					co = nil
					continue
				}
				lat = append(lat, float64(time.Since(t).Microseconds())/1000)
			}
			if co != nil {
				co.Close()
			}
			mu.Lock()
			into.latencies = append(into.latencies, lat...)
			into.Queries += len(lat)
			into.Failed += failed
			mu.Unlock()
		}()
	}
	wg.Wait()
	into.Seconds += time.Since(start).Seconds()
}

// shape says what one answer from addr to name holds, as the load got it (UDP, no EDNS).
func shape(addr, name string) string {
	c := &dns.Client{Net: "udp", Timeout: time.Second}
	r, _, err := c.Exchange(new(dns.Msg).SetQuestion(name, dns.TypeA), addr)
	if err != nil {
		return err.Error()
	}
	r.Compress = true // as both servers send it
	b, _ := r.Pack()
	s := fmt.Sprintf("%d records, %d bytes", len(r.Answer), len(b))
	if r.Truncated {
		s += ", TC"
	}
	return s
}

// dnsTable renders the run: each configuration's figures beside CoreDNS's.
func dnsTable(r *DNSResults) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Run of %s (%s; %s): %d workers over UDP, each server loaded %.0f s per configuration in each of %d rounds, "+
		"taken in turn; load average %s before, %s after.\n\n", r.Date, r.Binary, r.Machine, r.Workers, r.RunS, r.Rounds, r.Load, r.LoadAfter)
	s.WriteString("| configuration | dns-server q/s | p50 | p99 | CoreDNS q/s | p50 | p99 | q/s ratio | p99 ratio | answer (dns-server; CoreDNS) |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		o, f := row.Ours, row.CoreDNS
		fmt.Fprintf(&s, "| %s | %.0f | %.2f ms | %.2f ms | %.0f | %.2f ms | %.2f ms | %.2fx | %.2fx | %s; %s |\n",
			row.Case, o.QPS, o.P50, o.P99, f.QPS, f.P50, f.P99, ratio(o.QPS, f.QPS), ratio(o.P99, f.P99), o.Answer, f.Answer)
	}
	var failed []string
	for _, row := range r.Rows {
		if row.Ours.Failed+row.CoreDNS.Failed > 0 {
			failed = append(failed, fmt.Sprintf("%s: dns-server %d, CoreDNS %d", row.Case, row.Ours.Failed, row.CoreDNS.Failed))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(&s, "\nFailed queries (timeouts of 1 s, errors, empty answers): %s.\n", strings.Join(failed, "; "))
	}
	return s.String()
}
