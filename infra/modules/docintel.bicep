// A new Azure AI Document Intelligence account (only when documentIntelligenceEnabled and no existing account is
// named). Keys are disabled; the function app calls the layout model with its managed identity (Cognitive
// Services User), see docs/parsers.md.

param name string
param location string
param tags object = {}
@description('Disable public network access: the app comes in through a private endpoint (main.bicep usePrivateNetworking).')
param privateAccessOnly bool = false
@description('Pricing tier: S0 (500 MB and 2,000 pages per request) or F0 (free: 4 MB, 2 pages).')
@allowed([
  'S0'
  'F0'
])
param sku string = 'S0'

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  #checkov:skip=CKV_AZURE_134: public access is the privateAccessOnly parameter (usePrivateNetworking in main.bicep), off by default so the app works without a virtual network; local (key) authentication is disabled either way
  name: name
  location: location
  tags: tags
  kind: 'FormRecognizer'
  sku: {
    name: sku
  }
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    // A custom subdomain is required for Microsoft Entra ID authentication; it also makes the endpoint
    // https://<name>.cognitiveservices.azure.com, which main.bicep passes to the app.
    customSubDomainName: name
    disableLocalAuth: true
    publicNetworkAccess: privateAccessOnly ? 'Disabled' : 'Enabled'
    networkAcls: {
      defaultAction: privateAccessOnly ? 'Deny' : 'Allow'
    }
  }
}

output name string = account.name
output endpoint string = account.properties.endpoint
