// The operator's dashboard: an Application Insights workbook over the pipeline's metrics (customMetrics) and spans
// (dependencies), its queries in workbook.json beside this file (docs/operations.md#dashboard).

param location string
param tags object = {}
param applicationInsightsName string
@description('Title shown in the portal.')
param displayName string = 'Document chunking pipeline'

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, applicationInsightsName, 'chunking-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: displayName
    category: 'workbook'
    sourceId: appInsights.id
    serializedData: loadTextContent('workbook.json')
  }
}

output id string = workbook.id
