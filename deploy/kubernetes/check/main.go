// Command check is a schema check of the manifests in deploy/kubernetes and of what the
// Helm chart in deploy/helm renders: each document is decoded strictly into the Kubernetes
// API types of k8s.io/api, so that an unknown or misspelt field, or a value of the wrong
// type, fails. It is a module of its own so that anysqs does not depend on the Kubernetes
// libraries.
//
//	cd deploy/kubernetes/check && go run . ../*/*.yaml
//	helm template deploy/helm/anysqs > out.yaml && go run . out.yaml   (cmd/anysqs TestHelmChart)
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	failed := false
	for _, path := range os.Args[1:] {
		if strings.HasSuffix(path, "kustomization.yaml") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Println(err)
			failed = true
			continue
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if blank(doc) {
				continue
			}
			if err := check(doc); err != nil {
				fmt.Printf("%s (document %d): %v\n", path, i+1, err)
				failed = true
			} else {
				fmt.Printf("%s: ok\n", path)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func check(doc []byte) error {
	var meta struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "apps/v1 StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &serviceMonitor{}
	case "monitoring.coreos.com/v1 PrometheusRule":
		obj = &prometheusRule{}
	case "keda.sh/v1alpha1 ScaledObject":
		obj = &scaledObject{}
	case "keda.sh/v1alpha1 TriggerAuthentication":
		obj = &triggerAuthentication{}
	default:
		return fmt.Errorf("no schema here for %s %s", meta.APIVersion, meta.Kind)
	}
	return yaml.UnmarshalStrict(doc, obj)
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor (a CRD, so not in
// k8s.io/api) that the chart sets: any other field fails the strict decode, so a field
// the operator does not know cannot slip in unnoticed. Field names and types follow
// monitoring.coreos.com/v1 (prometheus-operator pkg/apis/monitoring/v1).
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// prometheusRule is the Prometheus Operator's PrometheusRule (monitoring.coreos.com/v1,
// prometheus-operator pkg/apis/monitoring/v1 PrometheusRuleSpec): groups of alerting and
// recording rules.
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name     string `json:"name"`
			Interval string `json:"interval,omitempty"`
			Rules    []struct {
				Alert       string            `json:"alert,omitempty"`
				Record      string            `json:"record,omitempty"`
				Expr        string            `json:"expr"`
				For         string            `json:"for,omitempty"`
				Labels      map[string]string `json:"labels,omitempty"`
				Annotations map[string]string `json:"annotations,omitempty"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// scaledObject is KEDA's ScaledObject (keda.sh/v1alpha1, kedacore/keda apis/keda/v1alpha1
// ScaledObjectSpec), with every field of its spec, so a misspelt one fails.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion             string `json:"apiVersion,omitempty"`
			Kind                   string `json:"kind,omitempty"`
			Name                   string `json:"name"`
			EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
		} `json:"scaleTargetRef"`
		PollingInterval       *int32 `json:"pollingInterval,omitempty"`
		InitialCooldownPeriod *int32 `json:"initialCooldownPeriod,omitempty"`
		CooldownPeriod        *int32 `json:"cooldownPeriod,omitempty"`
		IdleReplicaCount      *int32 `json:"idleReplicaCount,omitempty"`
		MinReplicaCount       *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount       *int32 `json:"maxReplicaCount,omitempty"`
		Advanced              *struct {
			RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
			HorizontalPodAutoscalerConfig *struct {
				Name     string                                         `json:"name,omitempty"`
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
			} `json:"horizontalPodAutoscalerConfig,omitempty"`
		} `json:"advanced,omitempty"`
		Fallback *struct {
			FailureThreshold int32 `json:"failureThreshold"`
			Replicas         int32 `json:"replicas"`
		} `json:"fallback,omitempty"`
		Triggers []struct {
			Type              string            `json:"type"`
			Name              string            `json:"name,omitempty"`
			UseCachedMetrics  bool              `json:"useCachedMetrics,omitempty"`
			MetricType        string            `json:"metricType,omitempty"`
			Metadata          map[string]string `json:"metadata"`
			AuthenticationRef *struct {
				Name string `json:"name"`
				Kind string `json:"kind,omitempty"`
			} `json:"authenticationRef,omitempty"`
		} `json:"triggers"`
	} `json:"spec"`
}

// triggerAuthentication is KEDA's TriggerAuthentication (keda.sh/v1alpha1): where a
// scaler's credentials come from.
type triggerAuthentication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretTargetRef []struct {
			Parameter string `json:"parameter"`
			Name      string `json:"name"`
			Key       string `json:"key"`
		} `json:"secretTargetRef,omitempty"`
		Env []struct {
			Parameter     string `json:"parameter"`
			Name          string `json:"name"`
			ContainerName string `json:"containerName,omitempty"`
		} `json:"env,omitempty"`
		PodIdentity *struct {
			Provider      string `json:"provider"`
			IdentityID    string `json:"identityId,omitempty"`
			RoleArn       string `json:"roleArn,omitempty"`
			IdentityOwner string `json:"identityOwner,omitempty"`
		} `json:"podIdentity,omitempty"`
	} `json:"spec"`
}

// blank reports whether a document holds nothing but comments (helm's "# Source:" lines
// of a template that rendered empty) and white space.
func blank(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}
