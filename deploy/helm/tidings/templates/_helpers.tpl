{{/* Name prefix of every object: <release>-tidings, or fullnameOverride; at most 63 characters. */}}
{{- define "tidings.fullname" -}}
{{- default (printf "%s-tidings" .Release.Name) .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* Labels of every object. */}}
{{- define "tidings.labels" -}}
app.kubernetes.io/name: tidings
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The Secret every pod reads its secret settings from. */}}
{{- define "tidings.secretName" -}}
{{- default (printf "%s-secrets" (include "tidings.fullname" .)) .Values.secret.existingSecret -}}
{{- end }}

{{/* image:tag (the chart's appVersion when no tag is given). */}}
{{- define "tidings.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end }}

{{/* terminationGracePeriodSeconds: above the whole graceful stop (docs/guides/deployment.md). */}}
{{- define "tidings.terminationGracePeriodSeconds" -}}
{{- add .Values.api.preStopSleepSeconds .Values.shutdown.graceSeconds .Values.shutdown.timeoutSeconds 10 -}}
{{- end }}

{{/* Environment of every Tidings container: the secrets by name, the stop bounds, then .Values.config. */}}
{{- define "tidings.env" -}}
- name: HOST
  value: "0.0.0.0"
- name: TIDINGS_SHUTDOWN_GRACE
  value: "{{ .Values.shutdown.graceSeconds }}s"
- name: TIDINGS_SHUTDOWN_TIMEOUT
  value: "{{ .Values.shutdown.timeoutSeconds }}s"
{{- range $name, $value := .Values.config }}
{{- if $value }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Pod-level settings shared by every pod. */}}
{{- define "tidings.podSpec" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: tmp
    emptyDir: {}
{{- end }}
