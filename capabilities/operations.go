package capabilities

// Operations are a backend's operational properties: what, beside the capability
// matrix, an operator weighs when choosing a backend. A driver declares them next to
// its capabilities (drivers.Description.Operations), and the report and the console
// render them from that one declaration. Each field is one or two short sentences for a
// person, in words: no symbols.
type Operations struct {
	// Durability: when an accepted message is safe, and against which failures.
	Durability string `json:"durability"`
	// Availability: what keeps the queues available, and what one failure takes down.
	Availability string `json:"availability"`
	// ScaleOut: how many gateways may serve one data set, and how it grows.
	ScaleOut string `json:"scale_out"`
	// Ordering: the order standard queues and FIFO message groups deliver in.
	Ordering string `json:"ordering"`
	// Throughput: the throughput class and what bounds it.
	Throughput string `json:"throughput"`
	// CostDrivers: what the bill grows with.
	CostDrivers string `json:"cost_drivers"`
	// RunsWhere: which processes and services run where, and what must be set up.
	RunsWhere string `json:"runs_where"`
}

// OperationalProperty names one field of Operations, in the order the report shows them.
type OperationalProperty struct {
	Key   string // the JSON name, e.g. "scale_out"
	Title string // for a table's row header, e.g. "scale-out"
	Value func(Operations) string
}

// OperationalProperties lists the fields of Operations in display order.
func OperationalProperties() []OperationalProperty {
	return []OperationalProperty{
		{"runs_where", "what runs where", func(o Operations) string { return o.RunsWhere }},
		{"scale_out", "scale-out", func(o Operations) string { return o.ScaleOut }},
		{"durability", "durability", func(o Operations) string { return o.Durability }},
		{"availability", "high availability", func(o Operations) string { return o.Availability }},
		{"ordering", "ordering guarantees", func(o Operations) string { return o.Ordering }},
		{"throughput", "throughput class", func(o Operations) string { return o.Throughput }},
		{"cost_drivers", "cost drivers", func(o Operations) string { return o.CostDrivers }},
	}
}

// Missing lists the keys of the properties o leaves empty.
func (o Operations) Missing() []string {
	var out []string
	for _, p := range OperationalProperties() {
		if p.Value(o) == "" {
			out = append(out, p.Key)
		}
	}
	return out
}
