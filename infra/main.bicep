// The whole pipeline in one resource group: `azd up` (or `az deployment group create`) deploys it from an empty
// group. See docs/deploy.md, "Deploy to Azure".
//
// Two stages, because Event Grid validates a webhook subscription against the running function:
//   1. blobWebhookEnabled=false: everything except the BlobCreated subscription; then the code is deployed;
//   2. blobWebhookEnabled=true: the same deployment again, now with the BlobCreated -> blob trigger webhook.
// azd runs stage 2 from the postdeploy hook in azure.yaml (infra/hooks/postdeploy.*).
targetScope = 'resourceGroup'

@minLength(1)
@maxLength(64)
@description('Name of the azd environment; it seeds the resource names.')
param environmentName string

@description('Region of every resource except Azure OpenAI (openAiLocation). Must offer Flex Consumption.')
param location string = resourceGroup().location

@description('Object ID of the person deploying (azd sets AZURE_PRINCIPAL_ID): gets data roles so the chunking CLI works from a workstation. Empty: none.')
param principalId string = ''

@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param principalType string = 'User'

// ---- Function App (Flex Consumption) ----
@description('Memory of each Function App instance in MB.')
@allowed([
  512
  2048
  4096
])
param functionInstanceMemoryMB int = 2048

@description('Maximum number of Function App instances (40 to 1000); 0 derives it from the embedding quota (embeddingTokensPerMinute).')
@minValue(0)
@maxValue(1000)
param functionMaximumInstanceCount int = 0

@description('Stage 2: create the BlobCreated subscription to the blob trigger webhook (needs the code deployed).')
param blobWebhookEnabled bool = false

// ---- Network ----
@description('Private endpoints for storage, Azure AI Search, Azure OpenAI and Document Intelligence in a new virtual network the function app joins; their public access closed (docs/deploy.md#private-networking).')
param usePrivateNetworking bool = false

// ---- Azure AI Search ----
@description('Name of an existing Azure AI Search service to use; empty creates one.')
param searchServiceName string = ''

@description('Resource group of the existing search service (default: this one).')
param searchResourceGroupName string = ''

@description('Tier of a new search service.')
@allowed([
  'free'
  'basic'
  'standard'
  'standard2'
  'standard3'
  'storage_optimized_l1'
  'storage_optimized_l2'
])
param searchSku string = 'basic'

@description('Semantic ranker plan of a new search service (not on free); the app queries with it when not disabled.')
@allowed([
  'disabled'
  'free'
  'standard'
])
param searchSemanticRanker string = 'disabled'

@description('Index the app creates and fills (AZURE_SEARCH_INDEX).')
param searchIndexName string = 'chunks'

// ---- Azure OpenAI ----
@description('Name of an existing Azure OpenAI account to use; empty creates one. Its embedding deployment must exist.')
param openAiAccountName string = ''

@description('Resource group of the existing Azure OpenAI account (default: this one).')
param openAiResourceGroupName string = ''

@description('Region of a new Azure OpenAI account (the embedding model must be offered there); empty: location.')
param openAiLocation string = ''

@description('Name of the embedding deployment (AZURE_OPENAI_EMBEDDING_DEPLOYMENT).')
param embeddingDeploymentName string = 'text-embedding-3-small'

@description('Embedding model of the new deployment (EMBEDDING_MODEL).')
param embeddingModel string = 'text-embedding-3-small'

@description('Version of the embedding model.')
param embeddingModelVersion string = '1'

@description('Deployment type of the new embedding deployment.')
@allowed([
  'Standard'
  'GlobalStandard'
])
param embeddingDeploymentSku string = 'Standard'

@description('Capacity of the new embedding deployment in thousands of tokens per minute.')
@minValue(1)
param embeddingCapacity int = 30

@description('Vector dimensions stored in the index (EMBEDDING_DIMENSIONS); at most what the model produces.')
param embeddingDimensions int = 1536

// ---- Azure AI Document Intelligence (optional: OCR, layout, tables; docs/parsers.md) ----
@description('Create a Document Intelligence account and parse PDF, images, DOCX, PPTX, XLSX and HTML with its layout model (billed per page). Off: local parsers, images refused.')
param documentIntelligenceEnabled bool = false

@description('Name of an existing Document Intelligence account to use instead of a new one (it needs a custom subdomain).')
param documentIntelligenceAccountName string = ''

@description('Resource group of the existing Document Intelligence account (default: this one).')
param documentIntelligenceResourceGroupName string = ''

@description('Tier of a new Document Intelligence account.')
@allowed([
  'S0'
  'F0'
])
param documentIntelligenceSku string = 'S0'

@description('Tokens per minute the embedding deployment allows (its quota); sizes the scale-out. 0: embeddingCapacity × 1,000 (the new deployment).')
@minValue(0)
param embeddingTokensPerMinute int = 0

@description('Seconds one stage-2 batch takes without throttling (embedding requests and the index upsert), as measured; sizes the scale-out.')
@minValue(1)
param batchSeconds int = 2

// ---- Document fields and access control (docs/settings.md#document-fields-and-access-control) ----
// Empty leaves the app setting empty, which the code reads as not set: its own default applies.
@description('METADATA_FIELDS: blob metadata or index tags that become filterable index fields, comma-separated name or name:field (category,department:dept). Empty: none.')
param metadataFields string = ''

@description('ACL_SOURCE: where acl_users/acl_groups come from: metadata (blob metadata) or none. Empty: metadata. adls is not offered: it needs a storage account with a hierarchical namespace, which this template does not create.')
@allowed([
  ''
  'metadata'
  'none'
])
param aclSource string = ''

@description('ACL_USERS_METADATA: the blob metadata holding the users who may read a document. Empty: acl_users.')
param aclUsersMetadata string = ''

@description('ACL_GROUPS_METADATA: the blob metadata holding the groups who may read a document. Empty: acl_groups.')
param aclGroupsMetadata string = ''

@description('ACL_DEFAULT: what a security-trimmed search shows of a document with neither list: public or deny. Empty: public.')
@allowed([
  ''
  'public'
  'deny'
])
param aclDefault string = ''

// ---- Dashboard, alerts and completion events (docs/operations.md#telemetry, docs/events.md) ----
@description('E-mail address the alerts (failed, stuck, poison, throttling, latency) are sent to; empty: no action group.')
param alertEmail string = ''

@description('Alert when the p95 from upload to indexed over an hour exceeds this many seconds.')
@minValue(1)
param uploadToIndexedP95Seconds int = 900

// ---- Concurrency from the embedding quota (docs/operations.md#concurrency-from-the-embedding-quota) ----
// tokens per batch × batches per minute ≤ tokens per minute, where a batch holds at most batchMaxChunks chunks of
// at most splitMaxTokens tokens (app settings below), each instance runs batchesPerInstance batches at a time
// (host.json: queues.batchSize + queues.newBatchThreshold) and each batch takes batchSeconds.
var batchMaxChunks = 64
var splitMaxTokens = 500
var tokensPerBatch = batchMaxChunks * splitMaxTokens
var hostJson = loadJsonContent('../host.json')
var batchesPerInstance = (hostJson.extensions.queues.batchSize) + (hostJson.extensions.queues.newBatchThreshold)
var tokensPerMinute = (embeddingTokensPerMinute > 0) ? embeddingTokensPerMinute : embeddingCapacity * 1000
var quotaInstances = (tokensPerMinute * batchSeconds) / (60 * tokensPerBatch * batchesPerInstance)
// Flex Consumption accepts 40 to 1000: below 40 the quota is exceeded at full scale-out, and back-pressure (429 →
// the batch deferred by Retry-After, never poisoned) absorbs the surplus.
var maximumInstanceCount = (functionMaximumInstanceCount > 0) ? max(40, functionMaximumInstanceCount) : min(1000, max(40, quotaInstances))

// ---- Names ----
var token = toLower(uniqueString(subscription().id, resourceGroup().id, environmentName))
var tags = {
  'azd-env-name': environmentName
}
var functionAppName = 'func-${token}'
var storageAccountName = 'st${token}'
var newSearchName = 'srch-${token}'
var newOpenAiName = 'oai-${token}'
var newDocIntelName = 'di-${token}'
var applicationInsightsName = 'appi-${token}'

// What the code reads (chunking/settings.py and the bindings of function_app.py); tests/infra checks these.
var documentsContainer = 'documents'
var payloadContainer = 'chunk-payloads'
var deploymentContainer = 'app-package'
var modelCacheContainer = 'model-cache'
var figuresContainer = 'figures'
var batchQueue = 'chunk-batches'
var blobEventsQueue = 'blob-events'
var stageOneJobQueue = 'stage1-jobs'
var ledgerTable = 'chunkingledger'
var completionEventsTopic = 'document-events'
var completionEventsNamespace = 'evgns-${token}'

var useExistingSearch = !empty(searchServiceName)
var useExistingOpenAi = !empty(openAiAccountName)
var searchGroup = empty(searchResourceGroupName) ? resourceGroup().name : searchResourceGroupName
var openAiGroup = empty(openAiResourceGroupName) ? resourceGroup().name : openAiResourceGroupName
var useExistingDocIntel = !empty(documentIntelligenceAccountName)
var useDocIntel = documentIntelligenceEnabled || useExistingDocIntel
var docIntelGroup = empty(documentIntelligenceResourceGroupName) ? resourceGroup().name : documentIntelligenceResourceGroupName

// ---- Private networking (docs/deploy.md#private-networking) ----
// One private DNS zone per kind of endpoint; the zones' order is the index each endpoint below names.
var privateDnsZoneNames = [
  'privatelink.blob.${environment().suffixes.storage}'
  'privatelink.queue.${environment().suffixes.storage}'
  'privatelink.table.${environment().suffixes.storage}'
  'privatelink.search.windows.net'
  'privatelink.openai.azure.com'
  'privatelink.cognitiveservices.azure.com'
  'privatelink.eventgrid.azure.net'
]
var privateEndpoints = concat([
  {
    name: 'pe-blob-${token}'
    serviceId: resourceId('Microsoft.Storage/storageAccounts', storageAccountName)
    groupId: 'blob'
    zone: 0
  }
  {
    name: 'pe-queue-${token}'
    serviceId: resourceId('Microsoft.Storage/storageAccounts', storageAccountName)
    groupId: 'queue'
    zone: 1
  }
  {
    name: 'pe-table-${token}'
    serviceId: resourceId('Microsoft.Storage/storageAccounts', storageAccountName)
    groupId: 'table'
    zone: 2
  }
  {
    name: 'pe-search-${token}'
    serviceId: resourceId(searchGroup, 'Microsoft.Search/searchServices', useExistingSearch ? searchServiceName : newSearchName)
    groupId: 'searchService'
    zone: 3
  }
  {
    name: 'pe-openai-${token}'
    serviceId: resourceId(openAiGroup, 'Microsoft.CognitiveServices/accounts', useExistingOpenAi ? openAiAccountName : newOpenAiName)
    groupId: 'account'
    zone: 4
  }
  {
    // The completion events' namespace: sub-resource 'topic', zone privatelink.eventgrid.azure.net
    // (docs/deploy.md#private-networking).
    name: 'pe-events-${token}'
    serviceId: resourceId('Microsoft.EventGrid/namespaces', completionEventsNamespace)
    groupId: 'topic'
    zone: 6
  }
], useDocIntel ? [
  {
    name: 'pe-docintel-${token}'
    serviceId: resourceId(docIntelGroup, 'Microsoft.CognitiveServices/accounts', useExistingDocIntel ? documentIntelligenceAccountName : newDocIntelName)
    groupId: 'account'
    zone: 5
  }
] : [])

module network 'modules/network.bicep' = if (usePrivateNetworking) {
  name: 'network'
  params: {
    name: 'vnet-${token}'
    location: location
    tags: tags
    dnsZoneNames: privateDnsZoneNames
  }
}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: 'id-${token}'
  location: location
  tags: tags
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: 'log-${token}'
    applicationInsightsName: applicationInsightsName
    location: location
    tags: tags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: storageAccountName
    location: location
    tags: tags
    documentsContainer: documentsContainer
    payloadContainer: payloadContainer
    deploymentContainer: deploymentContainer
    modelCacheContainer: modelCacheContainer
    figuresContainer: figuresContainer
    batchQueue: batchQueue
    blobEventsQueue: blobEventsQueue
    stageOneJobQueue: stageOneJobQueue
    ledgerTable: ledgerTable
    privateAccessOnly: usePrivateNetworking
  }
}

module search 'modules/search.bicep' = if (!useExistingSearch) {
  name: 'search'
  params: {
    name: newSearchName
    location: location
    tags: tags
    sku: searchSku
    semanticSearch: searchSemanticRanker
    privateAccessOnly: usePrivateNetworking
    // The vectorizer's calls to Azure OpenAI leave the search service through a shared private link.
    openAiAccountId: (usePrivateNetworking && searchSku != 'free') ? resourceId(openAiGroup, 'Microsoft.CognitiveServices/accounts', useExistingOpenAi ? openAiAccountName : newOpenAiName) : ''
  }
}

module openAi 'modules/openai.bicep' = if (!useExistingOpenAi) {
  name: 'openai'
  params: {
    name: newOpenAiName
    location: empty(openAiLocation) ? location : openAiLocation
    tags: tags
    embeddingDeploymentName: embeddingDeploymentName
    embeddingModel: embeddingModel
    embeddingModelVersion: embeddingModelVersion
    embeddingSkuName: embeddingDeploymentSku
    embeddingCapacity: embeddingCapacity
    privateAccessOnly: usePrivateNetworking
  }
}

module docIntel 'modules/docintel.bicep' = if (documentIntelligenceEnabled && !useExistingDocIntel) {
  name: 'docintel'
  params: {
    name: newDocIntelName
    location: location
    tags: tags
    sku: documentIntelligenceSku
    privateAccessOnly: usePrivateNetworking
  }
}

resource existingOpenAi 'Microsoft.CognitiveServices/accounts@2024-10-01' existing = if (useExistingOpenAi) {
  name: openAiAccountName
  scope: resourceGroup(openAiGroup)
}

var searchName = useExistingSearch ? searchServiceName : newSearchName
var openAiName = useExistingOpenAi ? openAiAccountName : newOpenAiName
var searchEndpoint = 'https://${searchName}.search.windows.net'
var openAiEndpoint = useExistingOpenAi ? existingOpenAi.properties.endpoint : openAi.outputs.endpoint
var docIntelName = useExistingDocIntel ? documentIntelligenceAccountName : newDocIntelName
// The custom subdomain's endpoint (Entra ID needs one); empty: every format is parsed locally.
var docIntelEndpoint = useDocIntel ? 'https://${docIntelName}.cognitiveservices.azure.com' : ''

// Every setting the app needs in Azure. Connections are identity-based: no keys or connection strings.
var appSettings = {
  // Host storage and the app's own storage clients (chunking/storage.py): the user-assigned identity.
  AzureWebJobsStorage__accountName: storage.outputs.name
  AzureWebJobsStorage__blobServiceUri: storage.outputs.blobEndpoint
  AzureWebJobsStorage__queueServiceUri: storage.outputs.queueEndpoint
  AzureWebJobsStorage__tableServiceUri: storage.outputs.tableEndpoint
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identity.properties.clientId
  // DefaultAzureCredential (Search, OpenAI, storage SDK clients) picks the user-assigned identity by this.
  AZURE_CLIENT_ID: identity.properties.clientId
  APPLICATIONINSIGHTS_CONNECTION_STRING: monitoring.outputs.connectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.properties.clientId};Authorization=AAD'
  // Bindings of function_app.py.
  BLOB_TRIGGER_SOURCE: 'EventGrid'
  DOCUMENTS_CONTAINER: documentsContainer
  CHUNK_BATCH_QUEUE: batchQueue
  BLOB_EVENTS_QUEUE: blobEventsQueue
  STAGE1_JOB_QUEUE: stageOneJobQueue
  RECONCILE_SCHEDULE: '0 30 3 * * *'
  REPAIR_SCHEDULE: '0 */5 * * * *'
  // chunking/settings.py.
  PAYLOAD_CONTAINER: payloadContainer
  // Chat, vision and embedding results cached by their input, shared by every instance (not the instance's /tmp).
  MODEL_CACHE_CONTAINER: modelCacheContainer
  // Figure images (PNG) the chunks point to, per document version (docs/parsers.md#figure-images).
  FIGURES_CONTAINER: figuresContainer
  LEDGER_BACKEND: 'table'
  LEDGER_TABLE: ledgerTable
  // The package directory is read-only on Flex Consumption; local caches go to the instance's temp space.
  CHUNKING_STATE_DIR: '/tmp/chunking'
  INDEX_BACKEND: 'azure'
  AZURE_SEARCH_ENDPOINT: searchEndpoint
  AZURE_SEARCH_INDEX: searchIndexName
  // The plan's own name (disabled, free, standard): the app reads it as off or on.
  AZURE_SEARCH_SEMANTIC_RANKER: searchSemanticRanker
  EMBEDDING_BACKEND: 'azure_openai'
  AZURE_OPENAI_ENDPOINT: openAiEndpoint
  AZURE_OPENAI_EMBEDDING_DEPLOYMENT: embeddingDeploymentName
  AZURE_OPENAI_API_VERSION: '2024-10-21'
  EMBEDDING_MODEL: embeddingModel
  EMBEDDING_DIMENSIONS: string(embeddingDimensions)
  // chunking/settings/docintel.py: set, PDF, images and Office files go to the layout model (keyless).
  DOCUMENT_INTELLIGENCE_ENDPOINT: docIntelEndpoint
  // chunking/settings/metadata.py: document fields and access lists ('' = the code's default).
  METADATA_FIELDS: metadataFields
  ACL_SOURCE: aclSource
  ACL_USERS_METADATA: aclUsersMetadata
  ACL_GROUPS_METADATA: aclGroupsMetadata
  ACL_DEFAULT: aclDefault
  // chunking/settings/observability.py: completion events to the Event Grid namespace topic (keyless).
  COMPLETION_EVENTS_ENDPOINT: completionEvents.outputs.endpoint
  COMPLETION_EVENTS_TOPIC: completionEventsTopic
  // The batch size the concurrency above is computed from.
  BATCH_MAX_CHUNKS: string(batchMaxChunks)
  SPLIT_MAX_TOKENS: string(splitMaxTokens)
}

// The host reads its storage with the identity from its first start: the roles come first.
module functionApp 'modules/functionapp.bicep' = {
  name: 'functionapp'
  dependsOn: [
    roles
    network
  ]
  params: {
    name: functionAppName
    planName: 'plan-${token}'
    location: location
    tags: tags
    identityId: identity.id
    storageBlobEndpoint: storage.outputs.blobEndpoint
    deploymentContainer: deploymentContainer
    instanceMemoryMB: functionInstanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    appSettings: appSettings
    subnetId: usePrivateNetworking ? resourceId('Microsoft.Network/virtualNetworks/subnets', 'vnet-${token}', 'app') : ''
  }
}

// Each endpoint once its service and the network exist; the loop is empty without usePrivateNetworking.
module endpoints 'modules/private-endpoint.bicep' = [for endpoint in (usePrivateNetworking ? privateEndpoints : []): {
  name: endpoint.name
  dependsOn: [
    network
    storage
    search
    openAi
    docIntel
    completionEvents
  ]
  params: {
    name: endpoint.name
    location: location
    tags: tags
    subnetId: resourceId('Microsoft.Network/virtualNetworks/subnets', 'vnet-${token}', 'private-endpoints')
    serviceId: endpoint.serviceId
    groupId: endpoint.groupId
    dnsZoneId: resourceId('Microsoft.Network/privateDnsZones', privateDnsZoneNames[endpoint.zone])
  }
}]

// ---- Roles: the function app's identity (every call the code makes) and the person deploying ----
module roles 'modules/roles.bicep' = {
  name: 'roles'
  dependsOn: [
    monitoring
    search
    openAi
    docIntel
  ]
  params: {
    functionPrincipalId: identity.properties.principalId
    identityId: identity.id
    principalId: principalId
    principalType: principalType
    storageAccountName: storage.outputs.name
    searchServiceName: searchName
    searchResourceGroupName: searchGroup
    openAiAccountName: openAiName
    openAiResourceGroupName: openAiGroup
    docIntelEnabled: useDocIntel
    docIntelAccountName: docIntelName
    docIntelResourceGroupName: docIntelGroup
    applicationInsightsName: applicationInsightsName
  }
}

// ---- The search service's identity: the index's Azure OpenAI vectorizer embeds query text keyless ----
// Only for a service created here (an existing one's identity is not known: docs/search.md#the-query-vectorizer).
module searchVectorizerRoles 'modules/openai-roles.bicep' = if (!useExistingSearch) {
  name: 'search-vectorizer-openai-roles'
  scope: resourceGroup(openAiGroup)
  dependsOn: [
    openAi
  ]
  params: {
    openAiAccountName: openAiName
    principalId: useExistingSearch ? '' : search.outputs.principalId
    principalType: 'ServicePrincipal'
    roleIds: [
      '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd' // Cognitive Services OpenAI User
    ]
  }
}

// ---- Event Grid: BlobDeleted -> blob-events queue now; BlobCreated -> blob trigger webhook in stage 2 ----
module events 'modules/events.bicep' = {
  name: 'events'
  params: {
    name: 'evgt-${token}'
    location: location
    tags: tags
    storageAccountName: storage.outputs.name
    documentsContainer: documentsContainer
    blobEventsQueue: blobEventsQueue
  }
}

module blobWebhook 'modules/blob-webhook.bicep' = if (blobWebhookEnabled) {
  name: 'blob-webhook'
  dependsOn: [
    functionApp
  ]
  params: {
    systemTopicName: events.outputs.name
    functionAppName: functionAppName
    functionName: 'ingest_document'
    documentsContainer: documentsContainer
  }
}

// ---- Telemetry: the operator's workbook and alert rules; completion events for applications ----
module completionEvents 'modules/completion-events.bicep' = {
  name: 'completion-events'
  params: {
    name: completionEventsNamespace
    location: location
    tags: tags
    topicName: completionEventsTopic
    privateAccessOnly: usePrivateNetworking
    functionPrincipalId: identity.properties.principalId
  }
}

module workbook 'modules/workbook.bicep' = {
  name: 'workbook'
  params: {
    location: location
    tags: tags
    applicationInsightsName: monitoring.outputs.applicationInsightsName
  }
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    location: location
    tags: tags
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    namePrefix: 'chunking-${token}'
    alertEmail: alertEmail
    uploadToIndexedP95Seconds: uploadToIndexedP95Seconds
  }
}

// ---- Outputs: azd stores them in the environment (azd env get-values) ----
output AZURE_LOCATION string = location
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output AZURE_FUNCTION_APP_URL string = 'https://${functionApp.outputs.defaultHostName}'
output AZURE_STORAGE_ACCOUNT string = storage.outputs.name
output AZURE_EVENT_GRID_SYSTEM_TOPIC string = events.outputs.name
output AZURE_SEARCH_ENDPOINT string = searchEndpoint
output AZURE_SEARCH_INDEX string = searchIndexName
output AZURE_OPENAI_ENDPOINT string = openAiEndpoint
output AZURE_OPENAI_EMBEDDING_DEPLOYMENT string = embeddingDeploymentName
output DOCUMENT_INTELLIGENCE_ENDPOINT string = docIntelEndpoint
output DOCUMENTS_CONTAINER string = documentsContainer
output BLOB_WEBHOOK_ENABLED bool = blobWebhookEnabled
output FUNCTION_MAXIMUM_INSTANCE_COUNT int = maximumInstanceCount
output USE_PRIVATE_NETWORKING bool = usePrivateNetworking
output COMPLETION_EVENTS_ENDPOINT string = completionEvents.outputs.endpoint
output COMPLETION_EVENTS_TOPIC string = completionEventsTopic
