// Every role assignment of the app (called by main.bicep): the function app's user-assigned identity gets the
// role each call of the code needs, on the resource the call goes to; the person deploying (principalId) gets data
// roles so the chunking CLI works from a workstation. tests/infra/test_roles.py derives the needed roles from the
// code and checks them here. The search, OpenAI and Document Intelligence accounts may live in other resource
// groups (existing ones): their assignments are made there.
targetScope = 'resourceGroup'

@description('Principal ID of the function app\'s user-assigned identity.')
param functionPrincipalId string

@description('Resource ID of that identity (it seeds the name of the telemetry role assignment).')
param identityId string

@description('Object ID of the person deploying; empty: no roles for a person.')
param principalId string

@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param principalType string

@description('The app\'s storage account.')
param storageAccountName string

@description('The search service (new or existing).')
param searchServiceName string

@description('Resource group of the search service.')
param searchResourceGroupName string

@description('The Azure OpenAI account (new or existing).')
param openAiAccountName string

@description('Resource group of the Azure OpenAI account.')
param openAiResourceGroupName string

@description('Whether the app parses with Document Intelligence (a new or an existing account).')
param docIntelEnabled bool

@description('The Document Intelligence account (used when docIntelEnabled).')
param docIntelAccountName string

@description('Resource group of the Document Intelligence account.')
param docIntelResourceGroupName string

@description('Application Insights component the app sends telemetry to (in this resource group).')
param applicationInsightsName string

// Built-in roles (IDs are the same in every tenant).
var roles = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageBlobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  searchIndexDataContributor: '8ebe5a00-799e-43f5-93ac-243d3dce84a7'
  searchServiceContributor: '7ca78c08-252a-4471-8644-bb5ff32d4ba0'
  cognitiveServicesOpenAiUser: '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'
  cognitiveServicesUser: 'a97b65f3-24c7-4388-baec-2e87135dc908'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
}

// ---- Roles of the function app's identity: every call the code makes ----
// Blob trigger, host leases and keys, deployment package, documents and payloads: Blob Data Owner.
// Queue trigger and output, the blob trigger's poison queue: Queue Data Contributor. Ledger: Table Data
// Contributor (the table is created if missing).
module functionStorageRoles 'storage-roles.bicep' = {
  name: 'function-storage-roles'
  params: {
    storageAccountName: storageAccountName
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    roleIds: [
      roles.storageBlobDataOwner
      roles.storageQueueDataContributor
      roles.storageTableDataContributor
    ]
  }
}

// Index documents (upsert, delete, query): Search Index Data Contributor. Index creation and schema updates:
// Search Service Contributor.
module functionSearchRoles 'search-roles.bicep' = {
  name: 'function-search-roles'
  scope: resourceGroup(searchResourceGroupName)
  params: {
    searchServiceName: searchServiceName
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    roleIds: [
      roles.searchIndexDataContributor
      roles.searchServiceContributor
    ]
  }
}

// Embeddings (and the optional chat model): Cognitive Services OpenAI User.
module functionOpenAiRoles 'openai-roles.bicep' = {
  name: 'function-openai-roles'
  scope: resourceGroup(openAiResourceGroupName)
  params: {
    openAiAccountName: openAiAccountName
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    roleIds: [
      roles.cognitiveServicesOpenAiUser
    ]
  }
}

// Layout analysis (analyze requests and their results): Cognitive Services User.
module functionDocIntelRoles 'docintel-roles.bicep' = if (docIntelEnabled) {
  name: 'function-docintel-roles'
  scope: resourceGroup(docIntelResourceGroupName)
  params: {
    accountName: docIntelAccountName
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    roleIds: [
      roles.cognitiveServicesUser
    ]
  }
}

// Telemetry with Entra ID authentication (local authentication is off): Monitoring Metrics Publisher.
resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource functionTelemetryRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(resourceGroup().id, applicationInsightsName, identityId, roles.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
  }
}

// ---- Roles of the person deploying, so `chunking upload`, `status` and `search` work from a workstation ----
module userStorageRoles 'storage-roles.bicep' = if (!empty(principalId)) {
  name: 'user-storage-roles'
  params: {
    storageAccountName: storageAccountName
    principalId: principalId
    principalType: principalType
    roleIds: [
      roles.storageBlobDataContributor
      roles.storageQueueDataContributor
      roles.storageTableDataContributor
    ]
  }
}

module userSearchRoles 'search-roles.bicep' = if (!empty(principalId)) {
  name: 'user-search-roles'
  scope: resourceGroup(searchResourceGroupName)
  params: {
    searchServiceName: searchServiceName
    principalId: principalId
    principalType: principalType
    roleIds: [
      roles.searchIndexDataContributor
      roles.searchServiceContributor
    ]
  }
}

module userOpenAiRoles 'openai-roles.bicep' = if (!empty(principalId)) {
  name: 'user-openai-roles'
  scope: resourceGroup(openAiResourceGroupName)
  params: {
    openAiAccountName: openAiAccountName
    principalId: principalId
    principalType: principalType
    roleIds: [
      roles.cognitiveServicesOpenAiUser
    ]
  }
}

module userDocIntelRoles 'docintel-roles.bicep' = if (docIntelEnabled && !empty(principalId)) {
  name: 'user-docintel-roles'
  scope: resourceGroup(docIntelResourceGroupName)
  params: {
    accountName: docIntelAccountName
    principalId: principalId
    principalType: principalType
    roleIds: [
      roles.cognitiveServicesUser
    ]
  }
}
