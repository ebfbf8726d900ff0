// Alert rules on the pipeline's telemetry in Application Insights (docs/operations.md#alerts): failed documents,
// stuck documents, poison messages, sustained throttling, upload-to-indexed p95 over a threshold. Each is a log
// search alert over the tables the Azure Monitor OpenTelemetry distro fills: customMetrics (the chunking.*
// instruments) and dependencies (the chunking.* spans). With an e-mail address, an action group notifies it.

param location string
param tags object = {}
param applicationInsightsName string
@description('Prefix of the rule names.')
param namePrefix string
@description('E-mail address the alerts go to; empty: the rules fire without notifying anyone.')
param alertEmail string = ''
@description('Upload-to-indexed p95 (seconds, over the last hour) above which an alert fires.')
param uploadToIndexedP95Seconds int = 900
@description('Throttling deferrals per 30 minutes above which throttling counts as sustained.')
param throttlingDeferrals int = 50

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (!empty(alertEmail)) {
  name: '${namePrefix}-ag'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'chunking'
    enabled: true
    emailReceivers: [
      {
        name: 'operator'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
  }
}

// name, what it watches (for the reader), severity, window, how often it is evaluated, query (one row per breach: the rule fires when the query returns any row).
var rules = [
  {
    name: 'failed-documents'
    frequency: 'PT5M'
    description: 'Document versions became failed (chunking.documents, outcome failed).'
    severity: 2
    window: 'PT15M'
    query: 'customMetrics | where name == "chunking.documents" and tostring(customDimensions["chunking.outcome"]) == "failed" | summarize failed = sum(valueSum) | where failed > 0'
  }
  {
    name: 'stuck-documents'
    frequency: 'PT1H'
    description: 'The last reconcile run found stuck documents (chunking.reconcile, found stuck).'
    severity: 2
    window: 'P1D'
    query: 'customMetrics | where name == "chunking.reconcile" and tostring(customDimensions["chunking.found"]) == "stuck" | summarize arg_max(timestamp, value) | where value > 0'
  }
  {
    name: 'poison-messages'
    frequency: 'PT5M'
    description: 'Messages failed every delivery and went to a poison queue (chunking.poison).'
    severity: 1
    window: 'PT15M'
    query: 'customMetrics | where name == "chunking.poison" | summarize poisoned = sum(valueSum) | where poisoned > 0'
  }
  {
    name: 'sustained-throttling'
    frequency: 'PT5M'
    description: 'Chunk batches deferred by 429/503 above the threshold in 30 minutes (chunking.throttling.deferrals).'
    severity: 3
    window: 'PT30M'
    query: 'customMetrics | where name == "chunking.throttling.deferrals" | summarize deferred = sum(valueSum) | where deferred > ${throttlingDeferrals}'
  }
  {
    name: 'upload-to-indexed-p95'
    frequency: 'PT15M'
    description: 'The p95 from upload to indexed is over the threshold (span chunking.complete).'
    severity: 3
    window: 'PT1H'
    query: 'dependencies | where name == "chunking.complete" | extend s = todouble(customDimensions["chunking.upload_to_indexed_s"]) | summarize p95 = percentile(s, 95) | where p95 > ${uploadToIndexedP95Seconds}'
  }
]

resource alertRules 'Microsoft.Insights/scheduledQueryRules@2023-03-15-preview' = [for rule in rules: {
  name: '${namePrefix}-${rule.name}'
  location: location
  tags: tags
  properties: {
    displayName: '${namePrefix} ${rule.name}'
    severity: rule.severity
    enabled: true
    scopes: [
      appInsights.id
    ]
    evaluationFrequency: rule.frequency
    windowSize: rule.window
    criteria: {
      allOf: [
        {
          query: rule.query
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: empty(alertEmail) ? [] : [
        actionGroup.id
      ]
    }
  }
}]

output ruleNames array = [for (rule, i) in rules: alertRules[i].name]
