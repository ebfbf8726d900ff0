// Role assignments on the storage account for one principal.

param storageAccountName string
param principalId string
@allowed([
  'ServicePrincipal'
  'User'
  'Group'
])
param principalType string
@description('Role definition IDs (GUIDs) to assign on the account.')
param roleIds array

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource assignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for roleId in roleIds: {
  name: guid(storage.id, principalId, roleId)
  scope: storage
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
  }
}]
