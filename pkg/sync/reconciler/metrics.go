package reconciler

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Prometheus figures `sync --watch` exports.
type Metrics struct {
	SyncLatency prometheus.Histogram
	QueueDepth  prometheus.Gauge
	Writes      *prometheus.CounterVec
	Conflicts   prometheus.Gauge
}

// NewMetrics registers the metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		SyncLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubectl_mcs_sync_duration_seconds", Help: "Time to decide and apply one service.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		QueueDepth:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubectl_mcs_queue_depth", Help: "Services waiting to be synced."}),
		Writes:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubectl_mcs_writes_total", Help: "API writes by cluster, kind and verb."}, []string{"cluster", "kind", "verb"}),
		Conflicts:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubectl_mcs_conflicts", Help: "Current conflicts across the clusterset."}),
	}
	reg.MustRegister(m.SyncLatency, m.QueueDepth, m.Writes, m.Conflicts)
	return m
}
