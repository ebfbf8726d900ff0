// A new Azure OpenAI account with the embedding deployment (only when no existing account is named). Keys are
// disabled; the function app calls it with its managed identity (Cognitive Services OpenAI User).

param name string
param location string
param tags object = {}
@description('Disable public network access: the app comes in through a private endpoint (main.bicep usePrivateNetworking).')
param privateAccessOnly bool = false
@description('Deployment name the app calls (AZURE_OPENAI_EMBEDDING_DEPLOYMENT).')
param embeddingDeploymentName string
@description('Embedding model, e.g. text-embedding-3-small.')
param embeddingModel string
@description('Model version, e.g. 1 for text-embedding-3-small.')
param embeddingModelVersion string
@description('Deployment type: Standard (regional) or GlobalStandard.')
param embeddingSkuName string = 'Standard'
@description('Capacity in units of 1,000 tokens per minute.')
param embeddingCapacity int

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  #checkov:skip=CKV_AZURE_134: public access is the privateAccessOnly parameter (usePrivateNetworking in main.bicep), off by default so the app works without a virtual network; local (key) authentication is disabled either way
  name: name
  location: location
  tags: tags
  kind: 'OpenAI'
  sku: {
    name: 'S0'
  }
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    // A custom subdomain is required for Microsoft Entra ID authentication.
    customSubDomainName: name
    disableLocalAuth: true
    publicNetworkAccess: privateAccessOnly ? 'Disabled' : 'Enabled'
    networkAcls: {
      defaultAction: privateAccessOnly ? 'Deny' : 'Allow'
    }
  }
}

resource embedding 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: embeddingDeploymentName
  sku: {
    name: embeddingSkuName
    capacity: embeddingCapacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: embeddingModel
      version: embeddingModelVersion
    }
  }
}

output name string = account.name
output endpoint string = account.properties.endpoint
output embeddingDeploymentName string = embedding.name
