package reconciler

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the Prometheus figures `sync --watch` exports.
type Metrics struct {
	SyncLatency prometheus.Histogram
	QueueDepth  prometheus.Gauge
	// Decisions counts the times a service was read from the caches and its writes decided: at
	// least once a sync, and again after each round of writes.
	Decisions prometheus.Counter
	Writes    *prometheus.CounterVec
	Conflicts prometheus.Gauge
	// WriteFailures counts refused writes; FailingWrites is how many objects' last write failed.
	WriteFailures *prometheus.CounterVec
	FailingWrites prometheus.Gauge
	// CachedObjects and CachedBytes are what the informer caches hold, by cluster and kind.
	CachedObjects *prometheus.GaugeVec
	CachedBytes   *prometheus.GaugeVec
}

// NewMetrics registers the metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		SyncLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubectl_mcs_sync_duration_seconds", Help: "Time to decide and apply one service.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		QueueDepth:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubectl_mcs_queue_depth", Help: "Services waiting to be synced."}),
		Decisions: prometheus.NewCounter(prometheus.CounterOpts{Name: "kubectl_mcs_decisions_total",
			Help: "Times a service was read from the caches and its writes decided."}),
		Writes:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubectl_mcs_writes_total", Help: "API writes by cluster, kind and verb."}, []string{"cluster", "kind", "verb"}),
		Conflicts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubectl_mcs_conflicts", Help: "Current conflicts across the clusterset."}),
		WriteFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubectl_mcs_write_failures_total",
			Help: "API writes that failed, by cluster and kind."}, []string{"cluster", "kind"}),
		FailingWrites: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubectl_mcs_failing_writes",
			Help: "Objects whose last write failed (their exports' Ready condition names them once the failure persists)."}),
		CachedObjects: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_mcs_cached_objects",
			Help: "Objects held in the informer caches, by cluster and kind."}, []string{"cluster", "kind"}),
		CachedBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubectl_mcs_cached_bytes",
			Help: "Estimated size of the cached objects as trimmed (protobuf, JSON for the mcs-api kinds), by cluster and kind."}, []string{"cluster", "kind"}),
	}
	reg.MustRegister(m.SyncLatency, m.QueueDepth, m.Decisions, m.Writes, m.Conflicts, m.WriteFailures, m.FailingWrites, m.CachedObjects, m.CachedBytes)
	return m
}

// cached adds what an event changed in a member's caches.
func (m *Metrics) cached(cluster, kind string, objects, bytes int) {
	if objects != 0 {
		m.CachedObjects.WithLabelValues(cluster, kind).Add(float64(objects))
	}
	m.CachedBytes.WithLabelValues(cluster, kind).Add(float64(bytes))
}
