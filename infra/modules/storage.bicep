// The one storage account of the app: host storage (AzureWebJobsStorage), the documents container the blob
// trigger watches, claim-check payloads, the model cache, the figure images, the chunk-batch, blob-event and stage-1 job queues with their poison
// queues, the ledger table, and the container Flex Consumption deploys the code package from. Keyless: every
// client uses Microsoft Entra ID (the function app's managed identity), so shared-key access is off.

@description('Storage account name (3-24 lowercase letters and digits).')
param name string
param location string
param tags object = {}
@description('Replication: Standard_LRS (default), Standard_ZRS, Standard_GRS, ...')
param skuName string = 'Standard_LRS'

@description('Container the blob trigger watches (DOCUMENTS_CONTAINER).')
param documentsContainer string
@description('Container of claim-check chunk payloads (PAYLOAD_CONTAINER).')
param payloadContainer string
@description('Container Flex Consumption reads the deployment package from.')
param deploymentContainer string
@description('Container of cached model results (MODEL_CACHE_CONTAINER).')
param modelCacheContainer string
@description('Container of figure images, the PNG files chunks point to (FIGURES_CONTAINER).')
param figuresContainer string
@description('Queue of chunk batches (CHUNK_BATCH_QUEUE); its poison queue is created too.')
param batchQueue string
@description('Queue Event Grid delivers BlobDeleted events to (BLOB_EVENTS_QUEUE); its poison queue is created too.')
param blobEventsQueue string
@description('Queue of stage-1 jobs: page ranges of long PDFs, reconcile and reprocess (STAGE1_JOB_QUEUE); its poison queue is created too.')
param stageOneJobQueue string
@description('Ledger table (LEDGER_TABLE).')
param ledgerTable string
@description('Refuse every public network but Azure\'s trusted services: the app comes in through private endpoints (main.bicep usePrivateNetworking).')
param privateAccessOnly bool = false

// The blob trigger's own poison queue: a fixed name in the Functions blob extension.
var blobTriggerPoisonQueue = 'webjobs-blobtrigger-poison'
var queueNames = [
  batchQueue
  '${batchQueue}-poison'
  blobEventsQueue
  '${blobEventsQueue}-poison'
  stageOneJobQueue
  '${stageOneJobQueue}-poison'
  blobTriggerPoisonQueue
]

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  #checkov:skip=CKV_AZURE_35: the default action is Deny with usePrivateNetworking; without it the Flex Consumption app reaches storage over its public endpoint, Entra ID only (shared keys off)
  #checkov:skip=CKV_AZURE_59: publicNetworkAccess stays Enabled even with usePrivateNetworking, where the firewall denies every network but Azure's trusted services: Event Grid's system-assigned identity delivers BlobDeleted events through that exception, which a Disabled account would refuse (docs/deploy.md#private-networking)
  #checkov:skip=CKV_AZURE_206: locally redundant storage by default: documents are the user's copies and the index can be rebuilt from them (reconcile); pass skuName Standard_ZRS or Standard_GRS for more
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: skuName
  }
  properties: {
    accessTier: 'Hot'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    allowCrossTenantReplication: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    // With privateAccessOnly, the firewall lets in private endpoints and Azure's trusted services only (Event
    // Grid delivering to the blob-events queue with its system-assigned identity): docs/deploy.md#private-networking.
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: privateAccessOnly ? 'Deny' : 'Allow'
    }
    encryption: {
      keySource: 'Microsoft.Storage'
      requireInfrastructureEncryption: true
      services: {
        blob: {
          enabled: true
          keyType: 'Account'
        }
        file: {
          enabled: true
          keyType: 'Account'
        }
        queue: {
          enabled: true
          keyType: 'Account'
        }
        table: {
          enabled: true
          keyType: 'Account'
        }
      }
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [for container in [
  documentsContainer
  payloadContainer
  deploymentContainer
  modelCacheContainer
  figuresContainer
]: {
  parent: blobService
  name: container
  properties: {
    publicAccess: 'None'
  }
}]

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [for queue in queueNames: {
  parent: queueService
  name: queue
}]

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource table 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = {
  parent: tableService
  name: ledgerTable
}

output name string = account.name
output id string = account.id
output blobEndpoint string = account.properties.primaryEndpoints.blob
output queueEndpoint string = account.properties.primaryEndpoints.queue
output tableEndpoint string = account.properties.primaryEndpoints.table
output queueNames array = queueNames
