// A new Azure AI Search service (only when no existing service is named). API keys are disabled: the function
// app reaches it with its managed identity (Search Service Contributor creates the index, Search Index Data
// Contributor reads and writes documents).

param name string
param location string
param tags object = {}
@description('Pricing tier: free, basic, standard, standard2, standard3, storage_optimized_l1/l2.')
@allowed([
  'free'
  'basic'
  'standard'
  'standard2'
  'standard3'
  'storage_optimized_l1'
  'storage_optimized_l2'
])
param sku string = 'basic'
@description('Semantic ranker plan: disabled, free (1,000 queries a month) or standard (billed per 1,000 queries). Not available on the free tier.')
@allowed([
  'disabled'
  'free'
  'standard'
])
param semanticSearch string = 'disabled'
param replicaCount int = 1
param partitionCount int = 1
@description('Disable public network access: clients come in through a private endpoint (main.bicep usePrivateNetworking).')
param privateAccessOnly bool = false
@description('Resource ID of the Azure OpenAI account the index\'s vectorizer calls through a shared private link; empty: none.')
param openAiAccountId string = ''

resource search 'Microsoft.Search/searchServices@2023-11-01' = {
  #checkov:skip=CKV_AZURE_208: one replica by default to keep the bill low (each replica is billed as a search unit); raise replicaCount to 3 for the write SLA
  #checkov:skip=CKV_AZURE_209: same reason as CKV_AZURE_208; raise replicaCount to 2 for the read SLA
  name: name
  location: location
  tags: tags
  sku: {
    name: sku
  }
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    disableLocalAuth: true
    hostingMode: 'default'
    publicNetworkAccess: privateAccessOnly ? 'disabled' : 'enabled'
    replicaCount: replicaCount
    partitionCount: partitionCount
    semanticSearch: (sku == 'free') ? null : semanticSearch
  }
}

// The search service's own outbound calls (the vectorizer's query embeddings) reach a private Azure OpenAI account
// through this link; the account's owner approves the connection once (docs/deploy.md#private-networking).
resource openAiLink 'Microsoft.Search/searchServices/sharedPrivateLinkResources@2023-11-01' = if (!empty(openAiAccountId)) {
  parent: search
  name: 'openai'
  properties: {
    groupId: 'openai_account'
    privateLinkResourceId: openAiAccountId
    requestMessage: 'Azure AI Search vectorizer of the chunking pipeline'
  }
}

output name string = search.name
output endpoint string = 'https://${search.name}.search.windows.net'
// The service's own identity: its Azure OpenAI vectorizer embeds query text as this principal (main.bicep gives it
// Cognitive Services OpenAI User on the account; docs/search.md#the-query-vectorizer).
output principalId string = search.identity.principalId
