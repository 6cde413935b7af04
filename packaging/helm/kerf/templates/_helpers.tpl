{{/* Names: the release's kerf, overridable. */}}
{{- define "kerf.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kerf.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "kerf.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "kerf.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kerf.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kerf.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kerf.labels" -}}
{{ include "kerf.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "kerf.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kerf.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kerf.claimName" -}}
{{- default (printf "%s-data" (include "kerf.fullname" .)) .Values.persistence.existingClaim -}}
{{- end -}}

{{/*
TOML from values. Helm reads every YAML number as a float, and kerf's typed config
refuses 30.0 where it wants an integer, so integral numbers are written as integers.
Strings are JSON strings (valid TOML basic strings); maps below a section are inline
tables (one line each, as TOML 1.0 wants), and a section's lists have one item a line,
so [[fleet.datasources]] become `datasources = [ { … }, … ]` under [fleet].
*/}}
{{- define "kerf.tomlKey" -}}
{{- if regexMatch "^[A-Za-z0-9_-]+$" . -}}{{ . }}{{- else -}}{{ toJson . }}{{- end -}}
{{- end -}}

{{- define "kerf.tomlValue" -}}
{{- $v := . -}}
{{- if kindIs "map" $v -}}
{ {{- $first := true -}}
{{- range $k, $x := $v -}}
{{- if not (kindIs "invalid" $x) -}}
{{- if not $first }}, {{ else }} {{ end -}}
{{- $first = false -}}
{{ include "kerf.tomlKey" $k }} = {{ include "kerf.tomlValue" $x }}
{{- end -}}
{{- end }} }
{{- else if kindIs "slice" $v -}}
[{{- range $i, $x := $v }}{{ if $i }}, {{ end }}{{ include "kerf.tomlValue" $x }}{{- end -}}]
{{- else if kindIs "float64" $v -}}
{{- if eq (float64 (int64 $v)) $v -}}{{ int64 $v }}{{- else -}}{{ $v }}{{- end -}}
{{- else if or (kindIs "string" $v) (kindIs "bool" $v) (kindIs "int" $v) (kindIs "int64" $v) -}}
{{- toJson $v -}}
{{- else -}}
{{- fail (printf "kerf: cannot write %v (%s) into kerf.toml" $v (kindOf $v)) -}}
{{- end -}}
{{- end -}}

{{/* A whole kerf.toml from a map: top-level scalars first, then one [section] per map. */}}
{{- define "kerf.toml" -}}
{{- range $k, $v := . }}
{{- if and (not (kindIs "map" $v)) (not (kindIs "invalid" $v)) }}
{{ include "kerf.tomlKey" $k }} = {{ include "kerf.tomlValue" $v }}
{{- end }}
{{- end }}
{{- range $section, $body := . }}
{{- if kindIs "map" $body }}

[{{ include "kerf.tomlKey" $section }}]
{{- range $k, $v := $body }}
{{- if kindIs "slice" $v }}
{{ include "kerf.tomlKey" $k }} = [
{{- range $v }}
  {{ include "kerf.tomlValue" . }},
{{- end }}
]
{{- else if not (kindIs "invalid" $v) }}
{{ include "kerf.tomlKey" $k }} = {{ include "kerf.tomlValue" $v }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The effective kerf.toml: the chart's keys, then .Values.config, then the fleet. */}}
{{- define "kerf.config" -}}
{{- include "kerf.validate" . -}}
{{- $c := deepCopy .Values.config -}}
{{- $_ := set $c "mode" .Values.mode -}}
{{- $_ := set $c "listen" (printf "0.0.0.0:%d" (int .Values.containerPort)) -}}
{{- $_ := set $c "data_dir" "/data" -}}
{{- $fleet := dict "datasources" (.Values.fleet.datasources | default list) "clusters" (.Values.fleet.clusters | default list) -}}
{{- $_ := set $c "fleet" $fleet -}}
{{- include "kerf.toml" $c -}}
{{- end -}}

{{/* The values kerf would refuse, refused at render time with one line. */}}
{{- define "kerf.validate" -}}
{{- if not (has .Values.mode (list "hub" "all-in-one" "agent")) -}}
{{- fail (printf "kerf: mode must be hub, all-in-one or agent, not %q" .Values.mode) -}}
{{- end -}}
{{- $owned := dict "mode" "mode" "listen" "containerPort" "data_dir" "persistence" "fleet" "fleet" -}}
{{- range $key, $instead := $owned -}}
{{- if hasKey $.Values.config $key -}}
{{- fail (printf "kerf: config.%s is set by the chart; use .Values.%s" $key $instead) -}}
{{- end -}}
{{- end -}}
{{- if and (ne .Values.mode "hub") (not (dig "agent" "cluster" "" .Values.config)) -}}
{{- fail (printf "kerf: mode %s needs config.agent.cluster (the cluster's name in the hub)" .Values.mode) -}}
{{- end -}}
{{- if and (eq .Values.mode "agent") (or .Values.fleet.datasources .Values.fleet.clusters) -}}
{{- fail "kerf: fleet declarations belong to the hub; mode agent takes none" -}}
{{- end -}}
{{- end -}}
