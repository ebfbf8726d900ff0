// Role assignments on an Azure AI Search service (new or existing, possibly in another resource group).

param searchServiceName string
param principalId string
@allowed([
  'ServicePrincipal'
  'User'
  'Group'
])
param principalType string
@description('Role definition IDs (GUIDs) to assign on the service.')
param roleIds array

resource search 'Microsoft.Search/searchServices@2023-11-01' existing = {
  name: searchServiceName
}

resource assignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for roleId in roleIds: {
  name: guid(search.id, principalId, roleId)
  scope: search
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
  }
}]
