// Log Analytics workspace and the workspace-based Application Insights resource the Functions host logs to.
// Local (instrumentation-key) authentication is off: the host sends telemetry with the app's managed identity
// (APPLICATIONINSIGHTS_AUTHENTICATION_STRING), which needs the Monitoring Metrics Publisher role.

param logAnalyticsName string
param applicationInsightsName string
param location string
param tags object = {}
@description('Days Log Analytics keeps the logs (30 is the free retention).')
param retentionInDays int = 30

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    DisableLocalAuth: true
  }
}

output applicationInsightsName string = appInsights.name
output applicationInsightsId string = appInsights.id
// The connection string identifies the resource; with local authentication disabled it grants nothing by itself.
output connectionString string = appInsights.properties.ConnectionString
