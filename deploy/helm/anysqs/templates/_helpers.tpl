{{/* The release's resource names: RELEASE-anysqs, or RELEASE when it already says anysqs. */}}
{{- define "anysqs.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "anysqs.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "anysqs.labels" -}}
{{ include "anysqs.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "anysqs.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "anysqs.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether the gateway keeps its data in a volume of its own: sqlite always. */}}
{{- define "anysqs.persistent" -}}
{{- if or (eq .Values.backend.name "sqlite") .Values.persistence.enabled -}}true{{- end -}}
{{- end -}}

{{/* Gateways: one per data directory with persistence; any number on a shared backend. */}}
{{- define "anysqs.replicas" -}}
{{- if include "anysqs.persistent" . -}}
{{- if and (not (kindIs "invalid" .Values.replicaCount)) (gt (int .Values.replicaCount) 1) -}}
{{- fail (printf "replicaCount %v: a %s gateway keeps its data in its own volume, one gateway per data directory; use a shared backend (postgres, spanner, ...) for more" .Values.replicaCount .Values.backend.name) -}}
{{- end -}}
1
{{- else -}}
{{- if kindIs "invalid" .Values.replicaCount }}2{{ else }}{{ int .Values.replicaCount }}{{ end -}}
{{- end -}}
{{- end -}}

{{- define "anysqs.dataDir" -}}/var/lib/anysqs{{- end -}}
{{- define "anysqs.keysDir" -}}/run/secrets/anysqs{{- end -}}

{{/* anysqs.yaml: the values' config, then the listeners, the backend and the keys. */}}
{{- define "anysqs.config" -}}
{{- $backends := list "sqlite" "postgres" "spanner" "firestore" "cosmos" "servicebus" "plugin" -}}
{{- if not (has .Values.backend.name $backends) -}}
{{- fail (printf "backend.name %q: one of %s" .Values.backend.name (join ", " $backends)) -}}
{{- end -}}
{{- $cfg := deepCopy (default dict .Values.config) -}}
{{- $_ := set $cfg "listen" (printf "0.0.0.0:%v" .Values.ports.sqs) -}}
{{- $_ = set $cfg "admin_listen" (printf "0.0.0.0:%v" .Values.ports.admin) -}}
{{- $options := deepCopy (default dict .Values.backend.options) -}}
{{- if eq .Values.backend.name "sqlite" -}}
{{- $_ = set $options "data_dir" (include "anysqs.dataDir" .) -}}
{{- end -}}
{{- $_ = set $cfg "backend" (dict "name" .Values.backend.name "options" $options) -}}
{{- if .Values.auth.keys -}}
{{- $creds := list -}}
{{- range $i, $k := .Values.auth.keys -}}
{{- $c := dict "access_key_id" $k.accessKeyId "secret_access_key_file" (printf "%s/%d/secret" (include "anysqs.keysDir" $) $i) -}}
{{- if $k.accountId -}}{{- $_ = set $c "account_id" (toString $k.accountId) -}}{{- end -}}
{{- $creds = append $creds $c -}}
{{- end -}}
{{- $_ = set $cfg "auth" (merge (dict "credentials" $creds) (default dict $cfg.auth)) -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The container's environment: each Secret reference {name, key} whose name is set, as
the variable the gateway or its backend reads; then extraEnv. */}}
{{- define "anysqs.env" -}}
{{- $refs := list (list "ANYSQS_AUTH_CREDENTIALS" .Values.auth.credentialsSecret) -}}
{{- if has .Values.backend.name (list "postgres" "plugin") -}}
{{- $refs = append $refs (list "ANYSQS_POSTGRES_DSN" .Values.secrets.postgresDSN) -}}
{{- else if eq .Values.backend.name "cosmos" -}}
{{- $refs = append $refs (list "ANYSQS_COSMOS_KEY" .Values.secrets.cosmosKey) -}}
{{- else if eq .Values.backend.name "servicebus" -}}
{{- $refs = append $refs (list "AZURE_SERVICEBUS_CONNECTION_STRING" .Values.secrets.serviceBusConnectionString) -}}
{{- end -}}
{{- $env := list -}}
{{- range $refs -}}
{{- $ref := index . 1 -}}
{{- if $ref.name -}}
{{- $env = append $env (dict "name" (index . 0) "valueFrom" (dict "secretKeyRef" (dict "name" $ref.name "key" $ref.key))) -}}
{{- end -}}
{{- end -}}
{{- concat $env (default (list) .Values.extraEnv) | toYaml -}}
{{- end -}}

{{/* The pod template, shared by the Deployment and the StatefulSet. */}}
{{- define "anysqs.podTemplate" -}}
metadata:
  labels:
    {{- include "anysqs.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}{{ toYaml . | nindent 4 }}{{ end }}
  annotations:
    # A changed anysqs.yaml rolls the pods: the gateway reads it at start only.
    checksum/config: {{ include "anysqs.config" . | sha256sum }}
    {{- with .Values.podAnnotations }}{{ toYaml . | nindent 4 }}{{ end }}
spec:
  serviceAccountName: {{ include "anysqs.serviceAccountName" . }}
  terminationGracePeriodSeconds: 30 # anysqs drains for up to 25 s on SIGTERM
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets: {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: anysqs
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: [serve, --config, /etc/anysqs/anysqs.yaml]
      env: {{- include "anysqs.env" . | nindent 8 }}
      ports:
        - {name: sqs, containerPort: {{ .Values.ports.sqs }}}
        - {name: admin, containerPort: {{ .Values.ports.admin }}}
      readinessProbe: # fails while the backend does not answer and while draining
        httpGet: {path: /readyz, port: admin}
        periodSeconds: 5
      livenessProbe: # the process only: a backend outage must not restart every pod
        httpGet: {path: /healthz, port: admin}
        periodSeconds: 10
        failureThreshold: 3
      resources: {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities: {drop: [ALL]}
      volumeMounts:
        - {name: config, mountPath: /etc/anysqs, readOnly: true}
        - {name: tmp, mountPath: /tmp} # the plugin host's sockets; the root filesystem is read-only
        {{- if include "anysqs.persistent" . }}
        - {name: data, mountPath: {{ include "anysqs.dataDir" . }}}
        {{- end }}
        {{- range $i, $k := .Values.auth.keys }}
        - {name: key-{{ $i }}, mountPath: {{ include "anysqs.keysDir" $ }}/{{ $i }}, readOnly: true}
        {{- end }}
        {{- with .Values.extraVolumeMounts }}{{ toYaml . | nindent 8 }}{{ end }}
  volumes:
    - name: config
      configMap: {name: {{ include "anysqs.fullname" . }}}
    - name: tmp
      emptyDir: {}
    {{- range $i, $k := .Values.auth.keys }}
    - name: key-{{ $i }}
      secret:
        secretName: {{ $k.secret.name | quote }}
        items: [{key: {{ $k.secret.key | quote }}, path: secret}]
    {{- end }}
    {{- with .Values.extraVolumes }}{{ toYaml . | nindent 4 }}{{ end }}
  {{- with .Values.nodeSelector }}
  nodeSelector: {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations: {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity: {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
