// The Function App on the Flex Consumption plan (Linux, Python), running as a user-assigned managed identity.
// Flex Consumption pulls the code package from a blob container with that identity and reads the runtime from
// functionAppConfig, so FUNCTIONS_WORKER_RUNTIME and FUNCTIONS_EXTENSION_VERSION are not app settings here.

param name string
param planName string
param location string
param tags object = {}
@description('Resource ID of the user-assigned identity the app runs as.')
param identityId string
@description('Blob endpoint of the storage account holding the deployment container (ends with a slash).')
param storageBlobEndpoint string
param deploymentContainer string
@description('Python version of the worker (Flex Consumption supports 3.10 to 3.13).')
param pythonVersion string = '3.11'
@description('Memory of each instance in MB: 512, 2048 or 4096.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 2048
@description('Upper bound of the scale-out (40 to 1000); it also caps concurrent calls to Azure OpenAI and Search.')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 100
@description('Spread the plan over availability zones (only in regions that offer it for Flex Consumption).')
param zoneRedundant bool = false
@description('App settings (name -> value); no secrets: every connection is identity-based.')
param appSettings object
@description('Subnet the app joins for its outbound calls (virtual network integration); empty: none.')
param subnetId string = ''

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  #checkov:skip=CKV_AZURE_225: zone redundancy is the zoneRedundant parameter, off by default because not every Flex Consumption region offers it
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    tier: 'FlexConsumption'
    name: 'FC1'
  }
  properties: {
    reserved: true
    zoneRedundant: zoneRedundant
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  #checkov:skip=CKV_AZURE_222: Event Grid calls the blob trigger's webhook over the internet, also with usePrivateNetworking (it cannot deliver to a private endpoint); the webhook needs the blobs_extension system key
  #checkov:skip=CKV_AZURE_17: Event Grid webhook deliveries carry no client certificate, so requiring one would stop the blob trigger
  #checkov:skip=CKV_AZURE_212: Flex Consumption scales to zero on purpose; always-ready instances are billed while idle
  #checkov:skip=CKV_AZURE_213: the app serves no HTTP route of its own to probe (queue, timer and Event Grid triggers only)
  name: name
  location: location
  // azd finds the app to deploy the `functions` service of azure.yaml by this tag.
  tags: union(tags, { 'azd-service-name': 'functions' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Inbound stays public even with a subnet: Event Grid delivers the blob trigger's webhook over the internet and
    // cannot reach a private endpoint (docs/deploy.md#private-networking); the webhook needs the system key.
    publicNetworkAccess: 'Enabled'
    virtualNetworkSubnetId: empty(subnetId) ? null : subnetId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      appSettings: [for setting in items(appSettings): {
        name: setting.key
        value: setting.value
      }]
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageBlobEndpoint}${deploymentContainer}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
      }
      runtime: {
        name: 'python'
        version: pythonVersion
      }
    }
  }
}

// Publishing with user names and passwords is off; azd and `func azure functionapp publish` use Entra ID.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

output name string = site.name
output id string = site.id
output defaultHostName string = site.properties.defaultHostName
