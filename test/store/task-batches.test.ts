import { openStore } from '../../src/store/open-store.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';
import { taskBatchContract } from './task-batch-contract.js';

// The poller's batched writes and renewals, on both drivers (the PostgreSQL ones when DATABASE_URL is set).
taskBatchContract('sqlite (memory)', (clock) => openStore(':memory:', { clock }));
const databaseUrl = serviceUrl('DATABASE_URL', 'postgres store: the batched task writes');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  taskBatchContract('postgres', (clock) => openStore(schemas.url(), { clock }));
}
