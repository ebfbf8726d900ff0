// Role assignments on a Document Intelligence account (new or existing, possibly in another resource group).

param accountName string
param principalId string
@allowed([
  'ServicePrincipal'
  'User'
  'Group'
])
param principalType string
@description('Role definition IDs (GUIDs) to assign on the account.')
param roleIds array

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' existing = {
  name: accountName
}

resource assignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for roleId in roleIds: {
  name: guid(account.id, principalId, roleId)
  scope: account
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
  }
}]
