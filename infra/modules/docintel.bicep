// A new Azure AI Document Intelligence account (only when documentIntelligenceEnabled and no existing account is
// named). Keys are disabled; the function app calls the layout model with its managed identity (Cognitive
// Services User), see docs/parsers.md.

param name string
param location string
param tags object = {}
@description('Pricing tier: S0 (500 MB and 2,000 pages per request) or F0 (free: 4 MB, 2 pages).')
@allowed([
  'S0'
  'F0'
])
param sku string = 'S0'

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  #checkov:skip=CKV_AZURE_134: public endpoint on purpose: the Flex Consumption app calls it without a virtual network; local (key) authentication is disabled
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
    publicNetworkAccess: 'Enabled'
  }
}

output name string = account.name
output endpoint string = account.properties.endpoint
