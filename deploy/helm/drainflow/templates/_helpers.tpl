{{/*
Labels of every object: the labels of deploy/base plus Helm's standard ones.
Call with (dict "root" $ "component" "operator"); component "" for shared objects.
*/}}
{{- define "drainflow.labels" -}}
app.kubernetes.io/name: drainflow
app.kubernetes.io/part-of: drainflow
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/* Selector labels of a component's pods (the same as deploy/base's). */}}
{{- define "drainflow.selectorLabels" -}}
app.kubernetes.io/name: drainflow
app.kubernetes.io/component: {{ . }}
{{- end }}

{{/* The image reference. */}}
{{- define "drainflow.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* A port value checked to be 1-65535. */}}
{{- define "drainflow.port" -}}
{{- $p := int .port -}}
{{- if or (lt $p 1) (gt $p 65535) -}}
{{- fail (printf "%s must be a port 1-65535, got %v" .name .port) -}}
{{- end -}}
{{ $p }}
{{- end }}

{{/*
A component's Deployment, PodDisruptionBudget and metrics Service, like deploy/base/operator.yaml
and worker.yaml. Call with (dict "root" $ "component" "operator" "values" .Values.operator
"flag" "--operator" "portEnv" "DRAINFLOW_OPERATOR_PORT" "grace" 30 "startupFailures" 30 "env" list).
*/}}
{{- define "drainflow.component" -}}
{{- $root := .root -}}
{{- $c := .component -}}
{{- $v := .values -}}
{{- $port := include "drainflow.port" (dict "port" $v.port "name" (printf "%s.port" $c)) -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: drainflow-{{ $c }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "drainflow.labels" (dict "root" $root "component" $c) | nindent 4 }}
spec:
  replicas: {{ int $v.replicas }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "drainflow.selectorLabels" $c | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- include "drainflow.selectorLabels" $c | nindent 8 }}
      annotations:
        # A change of the configuration rolls the pods (kustomize does it with a hashed name).
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: drainflow-{{ $c }}
      automountServiceAccountToken: true
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ .grace }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "drainflow.selectorLabels" $c | nindent 14 }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $c }}
          image: {{ include "drainflow.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: ['run', '{{ .flag }}', '--mode', 'in-cluster']
          envFrom:
            - configMapRef:
                name: drainflow-config
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            - name: TEMPORAL_API_KEY
              valueFrom:
                secretKeyRef:
                  name: {{ $root.Values.temporal.apiKey.secretName }}
                  key: {{ $root.Values.temporal.apiKey.key }}
                  optional: true
            - name: {{ .portEnv }}
              value: {{ $port | quote }}
            {{- range .env }}
            - name: {{ .name }}
              value: {{ .value | quote }}
            {{- end }}
          ports:
            - name: http
              containerPort: {{ $port }}
              protocol: TCP
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 2
            failureThreshold: {{ .startupFailures }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            periodSeconds: 5
            timeoutSeconds: 2
            failureThreshold: 3
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            runAsNonRoot: true
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
            seccompProfile:
              type: RuntimeDefault
          volumeMounts:
            - name: temporal-tls
              mountPath: /etc/drainflow/temporal-tls
              readOnly: true
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: temporal-tls
          secret:
            secretName: {{ $root.Values.temporal.tls.secretName }}
            optional: true
            defaultMode: 0440
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: drainflow-{{ $c }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "drainflow.labels" (dict "root" $root "component" $c) | nindent 4 }}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      {{- include "drainflow.selectorLabels" $c | nindent 6 }}
---
apiVersion: v1
kind: Service
metadata:
  name: drainflow-{{ $c }}-metrics
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "drainflow.labels" (dict "root" $root "component" $c) | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "drainflow.selectorLabels" $c | nindent 4 }}
  ports:
    - name: http-metrics
      port: {{ $port }}
      targetPort: http
      protocol: TCP
{{- end }}
