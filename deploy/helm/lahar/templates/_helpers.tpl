{{/* The scheduler's resource names: lahar-scheduler for a release named lahar. */}}
{{- define "lahar.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-scheduler" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "lahar.name" -}}
{{- default "lahar-scheduler" .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "lahar.labels" -}}
app.kubernetes.io/name: {{ include "lahar.name" . }}
app.kubernetes.io/part-of: lahar
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "lahar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lahar.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
